#!/usr/bin/env python3
"""Measure the peak GPU memory of TRL's real GRPOTrainer (1.16, no vLLM), per phase, one scenario per process.

Each ISSUE14_GRPO scenario saves a randomly initialised model of a published shape (configs/*.json) with the Qwen3
tokenizer (.bench/qwen-3, carried) to a temporary directory and hands its path to GRPOTrainer, so TRL loads the
policy, and for beta > 0 the reference copy, as it does in real use. Prompts are real text (the docstrings of
seqprof/assets/python_docs_chat.jsonl) cut to an exact token length: every generation batch holds a prompt of the
scenario's prompt length and one 16 tokens shorter, so prompts are left-padded and sdpa gets a mask, as with real
data. The reward is the completion's length. Three optimizer steps; the peak of steps 2-3 is recorded per phase
(generation, log-probs, forward, backward, optimizer) with torch.cuda.max_memory_allocated() and
reset_peak_memory_stats() around TRL's own methods, next to seqprof's prediction (predicted_at_run).

    export PYTHONPATH=$PWD/.whl/site   # trl, datasets and their pure-python dependencies, unpacked
    python3 benchmarks/memory/harness_grpo.py run --out $OUT --table measured_h200_issue14_grpo.json --commit SHA
    /tmp/trlvenv/bin/python benchmarks/memory/harness_grpo.py run --out /tmp/g --cpu-tiny   # dry run on CPU
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
from scenarios import ISSUE14_GRPO, Scenario  # noqa: E402
from trl_harness import STEPS, TOKENIZER, PhasePeaks, lora_config, saved_model  # noqa: E402
from trl_harness import TEXTS as PROMPTS  # noqa: E402

from seqprof.predict.memory import TrainingSetup  # noqa: E402

POOL = ISSUE14_GRPO

SHORTER = 16  # the second prompt of each generation batch, so the batch is padded


def tiny(sc: Scenario) -> tuple[dict, TrainingSetup]:
    """CPU dry run: harness.tiny's model, 2 generations of 2 prompts, 32 + 16 tokens."""
    cfg, _ = harness.tiny(dataclasses.replace(sc, setup=TrainingSetup()))  # its model only
    full = sc.config()  # the real tokenizer's ids: the published vocabulary and special tokens
    cfg.update({k: full[k] for k in ("vocab_size", "bos_token_id", "eos_token_id") if k in full})
    s = dataclasses.replace(sc.setup, micro_batch_size=4, num_generations=2, seq_len=32 + 16,
                            max_completion_length=16, sdpa_kernel="math")
    return cfg, s


def prompts(tok, length: int, rows: int) -> list[str]:
    """Texts that tokenize to exactly `length` and `length - SHORTER` tokens, alternating (shuffle is off)."""
    docs = [json.loads(line)["messages"][-1]["content"] for line in PROMPTS.read_text().splitlines()]
    out, i = [], 0
    while len(out) < rows:
        want = length if len(out) % 2 == 0 else length - SHORTER
        ids: list[int] = []
        while len(ids) < want + 8:
            ids += tok(docs[i % len(docs)] + "\n")["input_ids"]
            i += 1
        text = tok.decode(ids[:want])
        if len(tok(text)["input_ids"]) == want:  # decoding and re-tokenizing can merge tokens: keep exact ones
            out.append(text)
    return out


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[s.precision]
    tmp = saved_model(cfg, dtype, tok, "grpo_")  # TRL loads it, and the reference copy for beta > 0
    spg = s.steps_per_generation or s.gradient_accumulation_steps
    rows = s.micro_batch_size * spg // s.num_generations * (STEPS + 1)
    prompt_len = s.seq_len - s.max_completion_length
    data = Dataset.from_list([{"prompt": p} for p in prompts(tok, prompt_len, rows)])
    peft_config = lora_config(s)
    args = GRPOConfig(
        output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
        gradient_accumulation_steps=s.gradient_accumulation_steps, steps_per_generation=s.steps_per_generation,
        num_generations=s.num_generations, max_completion_length=s.max_completion_length,
        num_iterations=s.num_iterations, beta=s.beta, max_steps=STEPS, learning_rate=1e-6, optim=s.optimizer,
        gradient_checkpointing=s.gradient_checkpointing, bf16=s.precision == "bf16", fp16=s.precision == "fp16",
        model_init_kwargs={"dtype": s.precision if s.precision != "bf16" else "bfloat16",
                           "attn_implementation": s.attn_implementation},
        shuffle_dataset=False, report_to="none", save_strategy="no", logging_steps=1, seed=0,
        dataloader_num_workers=0, use_cpu=device == "cpu", disable_dropout=True)

    def length_reward(completions, **kwargs):
        return [float(len(c)) for c in completions]

    peaks = PhasePeaks(device, tracker)
    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = GRPOTrainer(model=tmp, reward_funcs=length_reward, args=args, train_dataset=data,
                          processing_class=tok, peft_config=peft_config, callbacks=[peaks.steps_callback()])
    trainer._generate_single_turn = peaks.around(trainer._generate_single_turn, "other", "generation")
    trainer._get_per_token_logps_and_entropies = peaks.around(
        trainer._get_per_token_logps_and_entropies, "other",
        lambda: "forward" if torch.is_grad_enabled() else "logprobs")
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "forward", "backward")
    shapes: list[dict] = []
    orig = trainer._generate_and_score_completions

    def scored(inputs):
        out = orig(inputs)
        shapes.append({k: list(v.shape) for k, v in out.items() if hasattr(v, "shape")})
        return out
    trainer._generate_and_score_completions = scored
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    trainable = [p for p in trainer.model.parameters() if p.requires_grad]
    res = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny,
           "setup": dataclasses.asdict(s), "peak_by_phase": peaks.phases,
           "max_allocated": max(peaks.phases.values()),
           "trainable_params": sum(p.numel() for p in trainable), "generation_batches": shapes,
           "reference_model": trainer.ref_model is not None, "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def main() -> int:
    return trl_harness.main("harness_grpo", "GRPOTrainer", __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
