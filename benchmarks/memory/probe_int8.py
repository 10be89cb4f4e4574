#!/usr/bin/env python3
"""Where an LLM.int8 LoRA step's memory goes: the run behind seqprof's model of 8-bit weights.

harness_sft.py measured a Qwen3-4B LoRA step over bitsandbytes 8-bit weights (prepared by peft's
prepare_model_for_kbit_training, gradient checkpointing, transformers' Trainer) at 25.4 GiB against 13.7 GiB
predicted. bitsandbytes' MatMul8bitLt keeps its input on the autograd context as an attribute
(`ctx.tensors = (CAt, subA, A)`), not through save_for_backward, so torch's non-reentrant checkpoint (transformers
5's default) cannot drop it: every 8-bit linear's input would live from its forward to its backward, in the dtype it
arrived in (fp32 where prepare_model_for_kbit_training upcast the norms). Reentrant checkpointing runs the layer's
forward under no_grad, so nothing would be kept.

For each variant (use_reentrant False, True) this loads the same random-init model, trains three steps of real text
through the Trainer as harness_sft.py does, and records per phase the peak, the memory allocated before and after
the measured forwards, and, walking the autograd graph from the loss at the end of a forward, every tensor held in
a bitsandbytes context (by dtype, and the bytes of distinct storages).

    python3 benchmarks/memory/probe_int8.py --out $OUT [--arch qwen3-1.7b --batch 2 --seq 2048]

On the H200 (probe_int8_qwen3-1.7b_b2_s2048.json): 17.43 GB with use_reentrant False, 12.01 GB with True; 5.42 GB
allocated after the forward and still at the optimizer step, as expected (4.8 GiB of inputs, plus outlier columns:
int8_outliers.py). The graph walk found no MatMul8bit node on CUDA (its `held` reads 0; on the CPU path it finds
them): the difference between the two variants is the measure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import harness  # noqa: E402,F401  (sets sys.path and the environment, like harness.py)
from harness_sft import _hf_model, texts  # noqa: E402
from scenarios import ALL, _s  # noqa: E402
from trl_harness import STEPS, TOKENIZER, PhasePeaks, saved_model  # noqa: E402


def held_by_bnb(loss) -> dict:
    """Tensors that bitsandbytes' autograd contexts hold as attributes, reached from `loss`'s graph."""
    import torch

    seen, stack, storages, by_dtype, nodes = set(), [loss.grad_fn], {}, {}, 0
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__.startswith("MatMul8bit"):  # MatMul8bitLt (CUDA), MatMul8bitFp (CPU: ctx.A)
            nodes += 1
            held = list(getattr(node, "tensors", None) or ()) + [getattr(node, "A", None)]
            for t in held:
                if isinstance(t, torch.Tensor) and t.numel():
                    key = t.untyped_storage().data_ptr()
                    if key not in storages:
                        storages[key] = t.untyped_storage().nbytes()
                        by_dtype[str(t.dtype)] = by_dtype.get(str(t.dtype), 0) + storages[key]
        stack.extend(fn for fn, _ in node.next_functions)
    return {"nodes": nodes, "bytes": sum(storages.values()), "bytes_by_dtype": by_dtype}


def measure(sc, reentrant: bool, tmp: str, tok, device: str) -> dict:
    import torch
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments

    s = sc.setup
    docs = texts(tok, s, s.micro_batch_size * STEPS)
    enc = [tok(t + tok.eos_token)["input_ids"] for t in docs]
    data = Dataset.from_list([{"input_ids": ids, "attention_mask": [1] * len(ids), "labels": ids} for ids in enc])
    args = TrainingArguments(output_dir=os.path.join(tmp, "out"), per_device_train_batch_size=s.micro_batch_size,
                             max_steps=STEPS, learning_rate=1e-6, optim=s.optimizer, gradient_checkpointing=True,
                             gradient_checkpointing_kwargs={"use_reentrant": reentrant}, bf16=True,
                             report_to="none", save_strategy="no", logging_steps=1, seed=0, dataloader_num_workers=0,
                             train_sampling_strategy="sequential", use_cpu=device == "cpu")
    model = _hf_model(tmp, s, device)
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      data_collator=DataCollatorForSeq2Seq(tok, padding="longest"))
    tracker = harness._LiveBytes() if device == "cpu" else None
    peaks = PhasePeaks(device, tracker)
    trainer.add_callback(peaks.steps_callback())
    record: dict = {"before_forward": [], "after_forward": [], "held": []}

    def pre(mod, a, kw):
        peaks.mark("other")
        if peaks.measuring:
            record["before_forward"].append(allocated())

    def post(mod, a, kw, out):
        peaks.mark("forward")
        if peaks.measuring:
            record["after_forward"].append(allocated())
            if getattr(out, "loss", None) is not None and out.loss.grad_fn is not None:
                record["held"].append(held_by_bnb(out.loss))
    trainer.model.register_forward_pre_hook(pre, with_kwargs=True)
    trainer.model.register_forward_hook(post, with_kwargs=True)
    trainer.accelerator.backward = peaks.around(trainer.accelerator.backward, "loss", "backward")
    allocated = (lambda: tracker.live) if tracker else torch.cuda.memory_allocated
    t0 = time.time()
    if tracker:
        tracker.mode.__enter__()
    trainer.train()
    if tracker:
        tracker.mode.__exit__(None, None, None)
    res = {"reentrant": reentrant, "peak_by_phase": peaks.phases, "max_allocated": max(peaks.phases.values()),
           **record, "wall_seconds": round(time.time() - t0, 1)}
    del trainer, model
    torch.cuda.empty_cache()
    return res


def main() -> int:
    import torch
    from transformers import AutoTokenizer

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", default="qwen3-1.7b")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=None, help="fewer decoder layers (a CPU dry run)")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    sc = _s(f"probe_int8_{a.arch}_b{a.batch}_s{a.seq}", a.arch, "LLM.int8 LoRA, prepared, checkpointing",
            micro_batch_size=a.batch, seq_len=a.seq, adapter="lora", lora_r=16, lora_targets=ALL, load_in_8bit=True,
            kbit_upcast=True, gradient_checkpointing=True, trainer_autocast=True, hf_trainer=True, padding_mask=True,
            layers=a.layers)
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    tmp = saved_model(sc.config(), torch.bfloat16, tok, "int8_")
    out = {"name": sc.name, "setup": dataclasses.asdict(sc.setup), "runs": [],
           "gpu": torch.cuda.get_device_name() if a.device != "cpu" else None}
    for reentrant in (False, True):
        try:
            out["runs"].append(measure(sc, reentrant, tmp, tok, a.device))
        except Exception as exc:  # noqa: BLE001 - an OOM is a result
            out["runs"].append({"reentrant": reentrant, "error": f"{type(exc).__name__}: {exc}"[:1500]})
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / f"{sc.name}.json").write_text(json.dumps(out, indent=1))
        print(json.dumps(out["runs"][-1])[:1500], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
