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

import argparse
import dataclasses
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import harness  # noqa: E402  (sets sys.path, the environment and the light seqprof package, like harness.py)
from scenarios import ISSUE14_DPO, Scenario  # noqa: E402

from seqprof.predict.architecture import architecture_from_config  # noqa: E402
from seqprof.predict.memory import TrainingSetup, estimate_memory  # noqa: E402

TOKENIZER = ROOT / ".bench" / "qwen-3"
TEXTS = ROOT / "seqprof" / "assets" / "python_docs_chat.jsonl"
STEPS, WARMUP = 3, 1
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
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import DPOConfig, DPOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    prompt_len, shorter = (TINY_PROMPT, TINY_SHORTER) if cpu_tiny else (PROMPT, SHORTER)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[s.precision]
    tmp = tempfile.mkdtemp(prefix="dpo_")
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg), dtype=dtype)
    model.save_pretrained(tmp)  # on CPU; TRL then loads it onto the GPU (and the reference copy for full FT)
    tok.save_pretrained(tmp)
    del model
    rows = s.micro_batch_size * s.gradient_accumulation_steps * STEPS
    data = Dataset.from_list(pairs(tok, s.seq_len, prompt_len, shorter, rows))
    peft_config = None
    if s.adapter:
        from peft import LoraConfig
        targets = "all-linear" if tuple(s.lora_targets) == ("all-linear",) else list(s.lora_targets)
        peft_config = LoraConfig(r=s.lora_r, lora_alpha=2 * s.lora_r, lora_dropout=s.lora_dropout,
                                 target_modules=targets, task_type="CAUSAL_LM")
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

    phases: dict[str, int] = {}
    state = {"measuring": False}
    passes: list[dict] = []  # every forward of the policy or the reference during the measured steps
    batches: list[dict] = []

    def mark(phase: str) -> None:
        """The peak since the previous mark, under `phase` (max over the measured steps)."""
        if device != "cpu":
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        else:
            peak = tracker.peak
            tracker.reset_peak()
        if state["measuring"]:
            phases[phase] = max(phases.get(phase, 0), peak)

    def hooks(module, who: str) -> None:
        def pre(mod, a, kw):
            mark("other" if torch.is_grad_enabled() else "forward")
            ids = kw.get("input_ids")
            if state["measuring"]:
                passes.append({"model": who, "grad": torch.is_grad_enabled(),
                               "fused_lm_head": bool(kw.get("fused_lm_head")),
                               "input_ids": list(ids.shape) if ids is not None else None})

        def post(mod, a, kw, out):
            mark("forward" if torch.is_grad_enabled() else "reference")
            if state["measuring"]:
                passes[-1]["logits"] = getattr(out, "logits", None) is not None

        module.register_forward_pre_hook(pre, with_kwargs=True)
        module.register_forward_hook(post, with_kwargs=True)

    class Steps(TrainerCallback):
        def on_step_end(self, args_, st, control, **kw):
            mark("optimizer")
            if st.global_step == WARMUP:
                state["measuring"] = True

    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = DPOTrainer(model=tmp, args=args, train_dataset=data, processing_class=tok, peft_config=peft_config,
                         callbacks=[Steps()])
    hooks(trainer.model, "policy")
    if trainer.ref_model is not None:
        hooks(trainer.ref_model, "reference")
    trainer.accelerator.backward = harness_around(trainer.accelerator.backward, mark, "loss", "backward")
    orig = trainer._compute_loss

    def compute(model, inputs, return_outputs):
        if state["measuring"]:
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
           "peak_by_phase": phases, "max_allocated": max(phases.values()),
           "trainable_params": sum(p.numel() for p in trainable), "batches": batches, "passes": passes,
           "reference_model": trainer.ref_model is not None, "loss_type": list(args.loss_type),
           "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def harness_around(fn, mark, before: str, after: str):
    """`fn` with a peak mark before and after it."""
    def wrapped(*a, **kw):
        mark(before)
        out = fn(*a, **kw)
        mark(after)
        return out
    return wrapped


def _child(name: str, device: str, cpu_tiny: bool, path: str) -> None:
    sc = next(s for s in ISSUE14_DPO if s.name == name)
    try:
        res = measure(sc, device, cpu_tiny)
    except Exception as exc:  # noqa: BLE001 - an OOM or a missing wheel is a result, not a crash
        import torch
        res = {"name": name, "error": f"{type(exc).__name__}: {exc}"[:2000],
               "oom": isinstance(exc, torch.OutOfMemoryError), "traceback": traceback.format_exc()[-4000:]}
    Path(path).write_text(json.dumps(res, indent=1))


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.cpu_tiny else "cuda"
    names = args.only.split(",") if args.only else [s.name for s in ISSUE14_DPO]
    versions = harness._versions()
    from importlib import metadata
    for dist in ("trl", "datasets", "accelerate"):
        versions[dist] = metadata.version(dist)
    table = {"command": " ".join(["python3", "benchmarks/memory/harness_dpo.py"] + sys.argv[1:]),
             "peak_measured": f"torch.cuda.max_memory_allocated() per phase over steps {WARMUP + 1}-{STEPS} of "
                              "TRL's DPOTrainer.train()", "versions": versions, "model_commit": args.commit,
             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": []}
    start = time.time()
    for name in names:
        if time.time() - start > args.deadline:
            table["results"].append({"name": name, "skipped": "deadline"})
            continue
        sc = next(s for s in ISSUE14_DPO if s.name == name)
        path = out / f"dpo_{len(table['results']):02d}.json"
        proc = mp.get_context("spawn").Process(target=_child, args=(name, device, args.cpu_tiny, str(path)))
        proc.start()
        proc.join(args.timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
            res = {"name": name, "error": f"timeout after {args.timeout}s"}
        elif path.exists():
            res = json.loads(path.read_text())
            path.unlink()
        else:
            res = {"name": name, "error": f"child exited {proc.exitcode} without a result"}
        cfg, s = tiny(sc) if args.cpu_tiny else (sc.config(), sc.setup)
        est = estimate_memory(architecture_from_config(cfg), s)
        res["predicted_at_run"] = est.allocated_bytes - (est.components["workspace"] if args.cpu_tiny else 0)
        res["predicted_peak_phase"] = est.peak_phase
        table["results"].append(res)
        (out / args.table).write_text(json.dumps(table, indent=1))
        meas, pred = res.get("max_allocated"), res["predicted_at_run"]
        if isinstance(meas, int):
            print(f"{name:56s} measured {meas / 2**30:8.3f} GiB  predicted {pred / 2**30:8.3f} GiB  error "
                  f"{100 * (pred - meas) / meas:+6.1f}%  {res['peak_by_phase']}", flush=True)
        else:
            print(f"{name:56s} {res.get('error')!s:.600}", flush=True)
    table["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    (out / args.table).write_text(json.dumps(table, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--only", default="")
    r.add_argument("--cpu-tiny", action="store_true")
    r.add_argument("--deadline", type=float, default=450.0)
    r.add_argument("--timeout", type=float, default=240.0, help="per scenario")
    r.add_argument("--table", default="measured_h200_issue14_dpo.json")
    r.add_argument("--commit", default="")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
