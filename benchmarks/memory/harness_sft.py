#!/usr/bin/env python3
"""Measure the peak GPU memory of an SFT step as the trainers run it, per phase, one scenario per process.

Each ISSUE14_SFT scenario saves a randomly initialised model of a published shape (configs/*.json) with the Qwen3
tokenizer (.bench/qwen-3, carried) and trains it for three optimizer steps on real text (the docstrings of
seqprof/assets/python_docs_chat.jsonl) cut to exact token lengths: in every batch the longest row is seq_len tokens
and the others 16, 32, ... tokens shorter, so the collator pads and sdpa gets the padding mask, as with real data.

- fused_lm_head True: TRL 1.16's SFTTrainer on a "text" dataset (every token labelled), given the model's path.
- fused_lm_head False: transformers' Trainer with DataCollatorForSeq2Seq (labels padded with -100), the model loaded
  by from_pretrained with a BitsAndBytesConfig when the scenario is 4- or 8-bit, then, for kbit_upcast, peft's
  prepare_model_for_kbit_training and get_peft_model, as axolotl builds a QLoRA model before its Trainer.

bf16=True (accelerate's autocast around the forward), optim and checkpointing from the scenario. The peak of steps
2-3 is recorded per phase (forward, loss, backward, optimizer) with torch.cuda.max_memory_allocated() and
reset_peak_memory_stats() at forward hooks and around accelerator.backward, next to seqprof's prediction
(predicted_at_run); each result records the batches the collator built (shape, padding) and the forwards that ran.

    export PYTHONPATH=$PWD/.whl/site   # trl, datasets, bitsandbytes and their pure-python dependencies, unpacked
    python3 benchmarks/memory/harness_sft.py run --out $OUT --table measured_h200_issue14_sft.json --commit SHA
    /tmp/trlvenv/bin/python benchmarks/memory/harness_sft.py run --out /tmp/s --cpu-tiny   # dry run on CPU
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
from scenarios import ISSUE14_SFT, Scenario  # noqa: E402
from trl_harness import STEPS, TEXTS, TOKENIZER, PhasePeaks, lora_config, saved_model  # noqa: E402

from seqprof.predict.memory import TrainingSetup  # noqa: E402

POOL = ISSUE14_SFT
STEP_DOWN = 16  # tokens between the rows of a batch


def tiny(sc: Scenario) -> tuple[dict, TrainingSetup]:
    """CPU dry run: harness.tiny's model with the real tokenizer's vocabulary, 2 rows of 48 tokens, unquantised."""
    cfg, _ = harness.tiny(dataclasses.replace(sc, setup=TrainingSetup()))
    full = sc.config()
    cfg.update({k: full[k] for k in ("vocab_size", "bos_token_id", "eos_token_id") if k in full})
    s = dataclasses.replace(sc.setup, micro_batch_size=2, seq_len=48, sdpa_kernel="math", load_in_4bit=False,
                            load_in_8bit=False, kbit_upcast=False,
                            optimizer="adamw_torch" if "8bit" in sc.setup.optimizer else sc.setup.optimizer)
    return cfg, s


def lengths(s) -> list[int]:
    """Row lengths of one batch: the longest at seq_len, each next one STEP_DOWN tokens shorter."""
    return [s.seq_len - STEP_DOWN * i for i in range(s.micro_batch_size)]


def texts(tok, s, rows: int) -> list[str]:
    """Texts whose tokens plus EOS number exactly the batch's row lengths, in batch order."""
    docs = [json.loads(line)["messages"][-1]["content"] for line in TEXTS.read_text().splitlines()]
    out, i, want = [], 0, lengths(s)
    while len(out) < rows:
        text, i = _exact(tok, docs, i, want[len(out) % len(want)], tok.eos_token)
        out.append(text)
    return out


def _quantization(s):
    import torch
    from transformers import BitsAndBytesConfig

    if s.load_in_4bit:
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16,
                                  bnb_4bit_use_double_quant=s.double_quant)
    if s.load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    return None


def _hf_model(path: str, s, device: str):
    """from_pretrained (quantised by bitsandbytes when asked), prepared and wrapped by peft as axolotl does."""
    import torch
    from transformers import AutoModelForCausalLM

    quant = _quantization(s)
    model = AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.bfloat16, attn_implementation=s.attn_implementation, quantization_config=quant,
        device_map={"": 0} if device != "cpu" else None)
    if quant is not None and s.kbit_upcast:
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=s.gradient_checkpointing)
    peft_config = lora_config(s)
    if peft_config is not None:
        from peft import get_peft_model
        model = get_peft_model(model, peft_config)
    return model


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    tmp = saved_model(cfg, torch.bfloat16, tok, "sft_")
    rows = s.micro_batch_size * s.gradient_accumulation_steps * STEPS
    docs = texts(tok, s, rows)
    common = dict(output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
                  gradient_accumulation_steps=s.gradient_accumulation_steps, max_steps=STEPS, learning_rate=1e-6,
                  optim=s.optimizer, gradient_checkpointing=s.gradient_checkpointing, bf16=True, report_to="none",
                  save_strategy="no", logging_steps=1, seed=0, dataloader_num_workers=0, use_cpu=device == "cpu",
                  train_sampling_strategy="sequential",
                  gradient_checkpointing_kwargs={"use_reentrant": s.checkpoint_reentrant})
    peaks = PhasePeaks(device, tracker)
    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    if s.fused_lm_head:
        from trl import SFTConfig, SFTTrainer

        args = SFTConfig(max_length=s.seq_len, model_init_kwargs={"dtype": "bfloat16",
                                                                  "attn_implementation": s.attn_implementation},
                         **common)
        trainer = SFTTrainer(model=tmp, args=args, train_dataset=Dataset.from_list([{"text": t} for t in docs]),
                             processing_class=tok, peft_config=lora_config(s), callbacks=[peaks.steps_callback()])
        kind = "trl.SFTTrainer"
    else:
        from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments

        vocab = cfg["vocab_size"]  # a Llama shape (128k) under the Qwen3 tokenizer (151k): ids folded into range
        enc = [[i % vocab for i in tok(t + tok.eos_token)["input_ids"]] for t in docs]
        data = Dataset.from_list([{"input_ids": ids, "attention_mask": [1] * len(ids), "labels": ids} for ids in enc])
        pad = DataCollatorForSeq2Seq(tok, padding="longest")

        def collate(rows):  # the pad id too (151643) is past a 128k vocabulary
            batch = pad(rows)
            batch["input_ids"] = batch["input_ids"] % vocab
            return batch
        trainer = Trainer(model=_hf_model(tmp, s, device), args=TrainingArguments(**common), train_dataset=data,
                          data_collator=collate,
                          callbacks=[peaks.steps_callback()])
        kind = "transformers.Trainer"
    batches: list[dict] = []
    passes: list[dict] = []
    peaks.watch_batches(trainer.model, batches, passes, lambda kw, out: {
        "grad": torch.is_grad_enabled(), "fused_lm_head": bool(kw.get("fused_lm_head")),
        "logits": getattr(out, "logits", None) is not None})
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    res = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny, "trainer": kind,
           "setup": dataclasses.asdict(s), "row_lengths": lengths(s), "peak_by_phase": peaks.phases,
           "max_allocated": max(peaks.phases.values()), "trainable_params": sum(p.numel() for p in trainable),
           "batches": batches, "passes": passes, "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def main() -> int:
    return trl_harness.main("harness_sft", "SFTTrainer / Trainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
