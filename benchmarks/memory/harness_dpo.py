#!/usr/bin/env python3
"""Measure the peak GPU memory of TRL's real DPOTrainer (1.16), per phase, one scenario per process.

Each ISSUE14_DPO scenario saves a randomly initialised model of a published shape (configs/*.json) with the Qwen3
tokenizer (.bench/qwen-3, carried) to a temporary directory and hands its path to DPOTrainer, so TRL loads the
policy, and for full fine-tuning without precompute_ref_log_probs the reference copy, as it does in real use.
Prompt, chosen and rejected are real text (seqprof/assets/python_docs_chat.jsonl) cut to exact token lengths: a
64-token prompt, prompt + chosen + EOS = seq_len, the rejected 16 tokens shorter, so every batch is padded and
sdpa gets a mask, as with real preference data. Trainer "ipo" runs DPOConfig(loss_type=["ipo"]); reference
"precomputed" sets precompute_ref_log_probs. Three optimizer steps; the peak of steps 2-3 is recorded per phase
(forward, reference, loss, backward, optimizer) with torch.cuda.max_memory_allocated() and
reset_peak_memory_stats() at forward hooks on the policy and the reference, next to seqprof's prediction
(predicted_at_run). Each result also records the batches DPOTrainer built (shapes, padding, precomputed columns)
and which forwards ran with and without grad.

    export PYTHONPATH=$PWD/.whl/site   # trl, datasets and their pure-python dependencies (.whl_grpo), unpacked
    python3 benchmarks/memory/harness_dpo.py run --out $OUT --table measured_h200_issue14_dpo.json --commit SHA
    /tmp/trlvenv/bin/python benchmarks/memory/harness_dpo.py run --out /tmp/d --cpu-tiny   # dry run on CPU
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
from scenarios import ISSUE14_DPO, Scenario  # noqa: E402
from trl_harness import STEPS, TEXTS, TOKENIZER, WARMUP, PhasePeaks, lora_config, saved_model  # noqa: E402, F401

from seqprof.predict.memory import TrainingSetup  # noqa: E402

POOL = ISSUE14_DPO

PROMPT, SHORTER = 64, 16  # prompt tokens; how much shorter each rejected is than its chosen
TINY_PROMPT, TINY_SHORTER = 8, 4


def tiny(sc: Scenario) -> tuple[dict, TrainingSetup]:
    """CPU dry run: harness.tiny's model with the real tokenizer's vocabulary, 2 pairs of 48 tokens."""
    cfg, _ = harness.tiny(dataclasses.replace(sc, setup=TrainingSetup()))  # its model only
    full = sc.config()
    cfg.update({k: full[k] for k in ("vocab_size", "bos_token_id", "eos_token_id") if k in full})
    return cfg, dataclasses.replace(sc.setup, micro_batch_size=2, seq_len=48, sdpa_kernel="math")


def _exact(tok, docs: list[str], i: int, want: int, suffix: str = "") -> tuple[str, int]:
    """Text from docs[i:] whose tokens, with `suffix` appended, number exactly `want`; and the next doc index."""
    while True:
        ids: list[int] = []
        j = i
        while len(ids) < want + 8:
            ids += tok(docs[j % len(docs)].lstrip() + "\n")["input_ids"]
            j += 1
        for cut in range(want, max(0, want - 4), -1):
            text = tok.decode(ids[:cut]).lstrip()
            if len(tok(text + suffix)["input_ids"]) == want:
                return text, j
        i = j


def pairs(tok, seq_len: int, prompt_len: int, shorter: int, rows: int) -> list[dict]:
    """Preference rows: prompt of `prompt_len` tokens ending in a newline, prompt + chosen + EOS of `seq_len`,
    prompt + rejected + EOS of `seq_len - shorter`, each checked the way DPOTrainer tokenizes them."""
    docs = [json.loads(line)["messages"][-1]["content"] for line in TEXTS.read_text().splitlines()]
    eos = tok.eos_token
    out, i = [], 0
    while len(out) < rows:
        prompt, i = _exact(tok, docs, i, prompt_len - 1)
        prompt += "\n"
        chosen, i = _exact(tok, docs, i, seq_len - prompt_len, eos)
        rejected, i = _exact(tok, docs, i, seq_len - shorter - prompt_len, eos)
        p = tok(prompt)["input_ids"]
        pc, pr = tok(prompt + chosen + eos)["input_ids"], tok(prompt + rejected + eos)["input_ids"]
        if len(p) == prompt_len and len(pc) == seq_len and len(pr) == seq_len - shorter \
                and pc[:prompt_len] == p and pr[:prompt_len] == p:  # no token merged across the prompt's end
            out.append({"prompt": prompt, "chosen": chosen, "rejected": rejected})
    return out


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    prompt_len, shorter = (TINY_PROMPT, TINY_SHORTER) if cpu_tiny else (PROMPT, SHORTER)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[s.precision]
    tmp = saved_model(cfg, dtype, tok, "dpo_")  # TRL loads it, and the reference copy for full FT
    rows = s.micro_batch_size * s.gradient_accumulation_steps * STEPS
    data = Dataset.from_list(pairs(tok, s.seq_len, prompt_len, shorter, rows))
    peft_config = lora_config(s)
    args = DPOConfig(
        output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
        gradient_accumulation_steps=s.gradient_accumulation_steps, max_steps=STEPS, learning_rate=1e-6,
        optim=s.optimizer, gradient_checkpointing=s.gradient_checkpointing, bf16=s.precision == "bf16",
        fp16=s.precision == "fp16", max_length=s.seq_len, loss_type=["ipo" if s.trainer == "ipo" else "sigmoid"],
        precompute_ref_log_probs=s.reference == "precomputed",
        model_init_kwargs={"dtype": s.precision if s.precision != "bf16" else "bfloat16",
                           "attn_implementation": s.attn_implementation},
        report_to="none", save_strategy="no", logging_steps=1, seed=0, dataloader_num_workers=0,
        use_cpu=device == "cpu", disable_dropout=True)

    peaks = PhasePeaks(device, tracker)
    passes: list[dict] = []  # every forward of the policy or the reference during the measured steps
    batches: list[dict] = []

    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = DPOTrainer(model=tmp, args=args, train_dataset=data, processing_class=tok, peft_config=peft_config,
                         callbacks=[peaks.steps_callback()])
    peaks.watch(trainer, passes)
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    orig = trainer._compute_loss

    def compute(model, inputs, return_outputs):
        if peaks.measuring:
            am, cm = inputs["attention_mask"], inputs["completion_mask"]
            batches.append({"input_ids": list(inputs["input_ids"].shape), "padding": int((am == 0).sum()),
                            "completion_tokens": int(cm.sum()), "precomputed": "ref_chosen_logps" in inputs})
        return orig(model, inputs, return_outputs)
    trainer._compute_loss = compute
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    res = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny,
           "setup": dataclasses.asdict(s), "prompt_tokens": prompt_len, "rejected_shorter_by": shorter,
           "peak_by_phase": peaks.phases, "max_allocated": max(peaks.phases.values()),
           "trainable_params": sum(p.numel() for p in trainable), "batches": batches, "passes": passes,
           "reference_model": trainer.ref_model is not None, "loss_type": list(args.loss_type),
           "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def main() -> int:
    return trl_harness.main("harness_dpo", "DPOTrainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
