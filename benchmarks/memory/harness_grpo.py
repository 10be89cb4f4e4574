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
from scenarios import ISSUE14_GRPO, Scenario  # noqa: E402

from seqprof.predict.architecture import architecture_from_config  # noqa: E402
from seqprof.predict.memory import TrainingSetup, estimate_memory  # noqa: E402

TOKENIZER = ROOT / ".bench" / "qwen-3"
PROMPTS = ROOT / "seqprof" / "assets" / "python_docs_chat.jsonl"
STEPS, WARMUP = 3, 1
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
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    cfg, s = tiny(sc) if cpu_tiny else (sc.config(), sc.setup)
    tracker = harness._LiveBytes() if device == "cpu" else None
    tok = AutoTokenizer.from_pretrained(TOKENIZER)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[s.precision]
    tmp = tempfile.mkdtemp(prefix="grpo_")
    config = AutoConfig.for_model(**cfg)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.save_pretrained(tmp)  # on CPU; TRL then loads it onto the GPU (and the reference copy for beta > 0)
    tok.save_pretrained(tmp)
    del model
    spg = s.steps_per_generation or s.gradient_accumulation_steps
    rows = s.micro_batch_size * spg // s.num_generations * (STEPS + 1)
    prompt_len = s.seq_len - s.max_completion_length
    data = Dataset.from_list([{"prompt": p} for p in prompts(tok, prompt_len, rows)])
    peft_config = None
    if s.adapter:
        from peft import LoraConfig
        targets = "all-linear" if tuple(s.lora_targets) == ("all-linear",) else list(s.lora_targets)
        peft_config = LoraConfig(r=s.lora_r, lora_alpha=2 * s.lora_r, lora_dropout=s.lora_dropout,
                                 target_modules=targets, task_type="CAUSAL_LM")
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

    phases: dict[str, int] = {}
    state = {"measuring": False}

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

    def around(fn, before: str, after):
        def wrapped(*a, **kw):
            mark(before)
            out = fn(*a, **kw)
            mark(after() if callable(after) else after)
            return out
        return wrapped

    class Steps(TrainerCallback):
        def on_step_end(self, args_, st, control, **kw):
            mark("optimizer")
            if st.global_step == WARMUP:
                state["measuring"] = True

    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    trainer = GRPOTrainer(model=tmp, reward_funcs=length_reward, args=args, train_dataset=data,
                          processing_class=tok, peft_config=peft_config, callbacks=[Steps()])
    trainer._generate_single_turn = around(trainer._generate_single_turn, "other", "generation")
    trainer._get_per_token_logps_and_entropies = around(
        trainer._get_per_token_logps_and_entropies, "other",
        lambda: "forward" if torch.is_grad_enabled() else "logprobs")
    trainer.accelerator.backward = around(trainer.accelerator.backward, "forward", "backward")
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
           "setup": dataclasses.asdict(s), "peak_by_phase": phases, "max_allocated": max(phases.values()),
           "trainable_params": sum(p.numel() for p in trainable), "generation_batches": shapes,
           "reference_model": trainer.ref_model is not None, "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        res["gpu"] = torch.cuda.get_device_name()
    return res


def _child(name: str, device: str, cpu_tiny: bool, path: str) -> None:
    sc = next(s for s in ISSUE14_GRPO if s.name == name)
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
    names = args.only.split(",") if args.only else [s.name for s in ISSUE14_GRPO]
    versions = harness._versions()
    from importlib import metadata
    for dist in ("trl", "datasets", "accelerate"):
        versions[dist] = metadata.version(dist)
    table = {"command": " ".join(["python3", "benchmarks/memory/harness_grpo.py"] + sys.argv[1:]),
             "peak_measured": f"torch.cuda.max_memory_allocated() per phase over steps {WARMUP + 1}-{STEPS} of "
                              "TRL's GRPOTrainer.train()", "versions": versions, "model_commit": args.commit,
             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": []}
    start = time.time()
    for name in names:
        if time.time() - start > args.deadline:
            table["results"].append({"name": name, "skipped": "deadline"})
            continue
        sc = next(s for s in ISSUE14_GRPO if s.name == name)
        path = out / f"grpo_{len(table['results']):02d}.json"
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
        arch = architecture_from_config(cfg)
        est = estimate_memory(arch, s)
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
    r.add_argument("--table", default="measured_h200_issue14_grpo.json")
    r.add_argument("--commit", default="")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
