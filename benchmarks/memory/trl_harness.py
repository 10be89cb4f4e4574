"""What the two harnesses of TRL's own trainers share (harness_grpo.py, harness_dpo.py): the random-init model on disk
that TRL loads, the LoRA config, the peak of each phase of a step, and the run over scenarios, one process each.

Each harness module gives `POOL` (its scenarios), `measure(sc, device, cpu_tiny) -> dict` and `tiny(sc)`; `main`
here parses the shared command line and writes the table with seqprof's prediction beside every measurement.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import sys
import tempfile
import time
import traceback
from pathlib import Path

import harness  # noqa: E402  (sets sys.path, the environment and the light seqprof package)

from seqprof.predict.architecture import architecture_from_config  # noqa: E402
from seqprof.predict.memory import estimate_memory  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / ".bench" / "qwen-3"  # the Qwen3 tokenizer, carried (git-ignored)
TEXTS = ROOT / "seqprof" / "assets" / "python_docs_chat.jsonl"  # real text: CPython's docstrings
STEPS, WARMUP = 3, 1  # optimizer steps run; the peaks of those after WARMUP are recorded


def saved_model(cfg: dict, dtype, tok, prefix: str) -> str:
    """A randomly initialised model of `cfg` and the tokenizer, saved to a fresh folder TRL loads (its own way,
    with the reference copy where it makes one)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    tmp = tempfile.mkdtemp(prefix=prefix)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**cfg), dtype=dtype)
    model.save_pretrained(tmp)  # on CPU; TRL then loads it onto the GPU
    tok.save_pretrained(tmp)
    del model
    return tmp


def lora_config(s):
    """peft's LoraConfig for the setup's adapter, or None for full fine-tuning."""
    if not s.adapter:
        return None
    from peft import LoraConfig

    targets = "all-linear" if tuple(s.lora_targets) == ("all-linear",) else list(s.lora_targets)
    return LoraConfig(r=s.lora_r, lora_alpha=2 * s.lora_r, lora_dropout=s.lora_dropout, target_modules=targets,
                      task_type="CAUSAL_LM")


class PhasePeaks:
    """The peak allocated between marks, filed under the phase that ended, max over the measured steps."""

    def __init__(self, device: str, tracker) -> None:
        self.device, self.tracker = device, tracker
        self.phases: dict[str, int] = {}
        self.measuring = False

    def mark(self, phase: str) -> None:
        import torch

        if self.device != "cpu":
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        else:
            peak = self.tracker.peak
            self.tracker.reset_peak()
        if self.measuring:
            self.phases[phase] = max(self.phases.get(phase, 0), peak)

    def around(self, fn, before: str, after):
        """`fn` with a mark before it and after it (`after` may be a function naming the phase then)."""
        def wrapped(*a, **kw):
            self.mark(before)
            out = fn(*a, **kw)
            self.mark(after() if callable(after) else after)
            return out
        return wrapped

    def watch(self, trainer, passes: list[dict]) -> None:
        """Marks around every forward of the trainer's policy and reference (a preference trainer's two models:
        a grad-enabled forward ends phase 'forward', a no_grad one 'reference'), and, while measuring, a record of
        each in *passes*: which model, with or without grad, through the fused head or not, its input shape,
        whether it returned logits."""
        import torch

        def hooks(module, who: str) -> None:
            def pre(mod, a, kw):
                self.mark("other" if torch.is_grad_enabled() else "forward")
                ids = kw.get("input_ids")
                if self.measuring:
                    passes.append({"model": who, "grad": torch.is_grad_enabled(),
                                   "fused_lm_head": bool(kw.get("fused_lm_head")),
                                   "input_ids": list(ids.shape) if ids is not None else None})

            def post(mod, a, kw, out):
                self.mark("forward" if torch.is_grad_enabled() else "reference")
                if self.measuring:
                    passes[-1]["logits"] = getattr(out, "logits", None) is not None

            module.register_forward_pre_hook(pre, with_kwargs=True)
            module.register_forward_hook(post, with_kwargs=True)

        hooks(trainer.model, "policy")
        if trainer.ref_model is not None:
            hooks(trainer.ref_model, "reference")

    def watch_batches(self, model, batches: list[dict], passes: list[dict], describe) -> None:
        """Marks around every forward of *model* (its start ends phase 'other', its end 'forward') and, while
        measuring, each batch's input shape and padding in *batches* and `describe(kwargs, output)` of each forward
        in *passes* (the one-model trainers: transformers' Trainer, SFTTrainer, Unsloth's)."""
        def pre(mod, a, kw):
            self.mark("other")
            ids, am = kw.get("input_ids"), kw.get("attention_mask")
            if self.measuring and ids is not None:
                batches.append({"input_ids": list(ids.shape),
                                "padding": int((am == 0).sum()) if am is not None else None})

        def post(mod, a, kw, out):
            self.mark("forward")
            if self.measuring:
                passes.append(describe(kw, out))

        model.register_forward_pre_hook(pre, with_kwargs=True)
        model.register_forward_hook(post, with_kwargs=True)

    def steps_callback(self):
        """A TrainerCallback marking the optimizer step and starting the measurement after WARMUP steps."""
        from transformers import TrainerCallback

        peaks = self

        class Steps(TrainerCallback):
            def on_step_end(self, args_, st, control, **kw):
                peaks.mark("optimizer")
                if st.global_step == WARMUP:
                    peaks.measuring = True
        return Steps()


def _child(module: str, name: str, device: str, cpu_tiny: bool, path: str) -> None:
    mod = importlib.import_module(module)
    sc = next(s for s in mod.POOL if s.name == name)
    try:
        res = mod.measure(sc, device, cpu_tiny)
    except Exception as exc:  # noqa: BLE001 - an OOM or a missing wheel is a result, not a crash
        import torch
        res = {"name": name, "error": f"{type(exc).__name__}: {exc}"[:2000],
               "oom": isinstance(exc, torch.OutOfMemoryError), "traceback": traceback.format_exc()[-4000:]}
    Path(path).write_text(json.dumps(res, indent=1))


def run(args: argparse.Namespace, module: str, trainer: str) -> int:
    """Every scenario of `module` (or --only), each in a spawned process; the table is rewritten after each."""
    mod = importlib.import_module(module)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.cpu_tiny else "cuda"
    names = args.only.split(",") if args.only else [s.name for s in mod.POOL]
    versions = harness._versions()
    from importlib import metadata
    for dist in ("trl", "datasets", "accelerate"):
        versions[dist] = metadata.version(dist)
    table = {"command": " ".join(["python3", f"benchmarks/memory/{module}.py"] + sys.argv[1:]),
             "peak_measured": f"torch.cuda.max_memory_allocated() per phase over steps {WARMUP + 1}-{STEPS} of "
                              f"TRL's {trainer}.train()", "versions": versions, "model_commit": args.commit,
             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": []}
    prefix = module.removeprefix("harness_")
    start = time.time()
    for name in names:
        if time.time() - start > args.deadline:
            table["results"].append({"name": name, "skipped": "deadline"})
            continue
        sc = next(s for s in mod.POOL if s.name == name)
        path = out / f"{prefix}_{len(table['results']):02d}.json"
        proc = mp.get_context("spawn").Process(target=_child, args=(module, name, device, args.cpu_tiny, str(path)))
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
        cfg, s = mod.tiny(sc) if args.cpu_tiny else (sc.config(), sc.setup)
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


def main(module: str, trainer: str, description: str) -> int:
    ap = argparse.ArgumentParser(description=description)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--only", default="")
    r.add_argument("--cpu-tiny", action="store_true")
    r.add_argument("--deadline", type=float, default=450.0)
    r.add_argument("--timeout", type=float, default=240.0, help="per scenario")
    r.add_argument("--table", default=f"measured_h200_issue14_{module.removeprefix('harness_')}.json")
    r.add_argument("--commit", default="")
    return run(ap.parse_args(), module, trainer)
