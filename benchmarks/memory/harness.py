#!/usr/bin/env python3
"""Measure the peak GPU memory of real training steps, one scenario per forked process, results as they come.

Each scenario builds a randomly initialised model from a real architecture's published config values
(configs/*.json: nothing is downloaded), applies the setup (dtype, LoRA via peft, 4-bit via bitsandbytes,
gradient checkpointing, attention kernel, loss implementation, DPO with a reference model), runs one
warm-up optimizer step, resets the peak counter, runs two more steps and records
`torch.cuda.max_memory_allocated()` over them: the steady-state peak, optimizer states already allocated,
which is what seqprof.predict.memory predicts (its `allocated_bytes`).

    python3 benchmarks/memory/harness.py run --out DIR [--only NAME,...] [--deadline SECONDS]
    python3 benchmarks/memory/harness.py run --out DIR --cpu-tiny   # dry run on CPU, 2 layers, short sequences
    python3 benchmarks/memory/harness.py run --out DIR --set issue14_hybrid --table measured_h200_issue14_hybrid.json

On CPU (--cpu-tiny) the peak is counted by a dispatch mode that tracks every tensor storage's lifetime,
so the harness and the model's structure can be checked without a GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # the parent must not initialise CUDA before forking
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import types  # noqa: E402

# Import seqprof.predict.memory without seqprof/__init__.py, whose analyze dependencies the GPU image lacks.
_pkg = types.ModuleType("seqprof")
_pkg.__path__ = [str(ROOT / "seqprof")]
sys.modules.setdefault("seqprof", _pkg)

from scenarios import (  # noqa: E402
    HOLDOUT,
    ISSUE14,
    ISSUE14_HOLDOUT,
    ISSUE14_HYBRID,
    ISSUE14_CCE,
    ISSUE14_HYBRID_HOLDOUT,
    SCENARIOS,
    Scenario,
)

from seqprof.predict.architecture import architecture_from_config  # noqa: E402
from seqprof.predict.memory import TrainingSetup, estimate_memory  # noqa: E402

WARMUP_STEPS, MEASURED_STEPS = 1, 2
ALL_SCENARIOS = SCENARIOS + HOLDOUT + ISSUE14 + ISSUE14_HOLDOUT + ISSUE14_HYBRID + ISSUE14_HYBRID_HOLDOUT + ISSUE14_CCE


def tiny(sc: Scenario) -> tuple[dict, TrainingSetup]:
    """The CPU dry-run version: 2 layers, widths / 8 (same head_dim and GQA ratio), short sequences."""
    cfg = sc.config()
    cfg["num_hidden_layers"] = 2
    if isinstance(cfg.get("layer_types"), list):  # a hybrid: one period of its pattern (3 linear + 1 full)
        cfg["num_hidden_layers"] = cfg["layer_types"].index("full_attention") + 1
        cfg["layer_types"] = cfg["layer_types"][:cfg["num_hidden_layers"]]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    ratio = cfg["num_attention_heads"] // cfg["num_key_value_heads"]
    cfg["hidden_size"] //= 8
    cfg["intermediate_size"] //= 8
    cfg["num_attention_heads"] = max(ratio, cfg["num_attention_heads"] // 8 // ratio * ratio)
    cfg["num_key_value_heads"] = cfg["num_attention_heads"] // ratio
    cfg["head_dim"] = head_dim
    cfg["vocab_size"] = 4096
    cfg["bos_token_id"] = cfg["eos_token_id"] = 1
    s = sc.setup
    seq = min(s.seq_len, 64)
    kernel = "math" if s.attn_implementation == "sdpa" else None  # CPU sdpa has no GQA kernel
    return cfg, dataclasses.replace(s, seq_len=seq, micro_batch_size=min(s.micro_batch_size, 2), sdpa_kernel=kernel)


class _LiveBytes:
    """CPU stand-in for the CUDA allocator's counters: live bytes of every tensor storage, and their peak."""

    def __init__(self) -> None:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_leaves

        outer = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                for t in tree_leaves(out):
                    if isinstance(t, torch.Tensor):
                        outer.track(t)
                return out

        self.mode = Mode()
        self.live = 0
        self.peak = 0
        self.keys: dict[int, int] = {}

    def track(self, t) -> None:
        import weakref
        st = t.untyped_storage()
        key = st.data_ptr()
        if key == 0 or key in self.keys:
            return
        n = st.nbytes()
        self.keys[key] = n
        self.live += n
        self.peak = max(self.peak, self.live)
        weakref.finalize(st, self._free, key)

    def _free(self, key: int) -> None:
        self.live -= self.keys.pop(key, 0)

    def reset_peak(self) -> None:
        self.peak = self.live


def _build(cfg: dict, s: TrainingSetup, device: str):
    """The model as a trainer would hold it: dtype, 4-bit linears, checkpointing, LoRA adapters."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(**cfg)
    config.use_cache = False
    dtype = torch.float32 if (s.precision == "fp32" or s.master_weights_fp32) else (
        torch.bfloat16 if s.precision == "bf16" else torch.float16)
    quant = s.load_in_4bit
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=s.attn_implementation)
    if quant:  # as transformers' bitsandbytes integration does: every linear but lm_head becomes NF4
        import bitsandbytes as bnb
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if isinstance(child, torch.nn.Linear) and name != "lm_head":
                    q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                          compute_dtype=dtype, compress_statistics=s.double_quant,
                                          quant_type="nf4", device="meta")
                    q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False,
                                                 compress_statistics=s.double_quant, quant_type="nf4").to(device)
                    if child.bias is not None:
                        q.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
                    setattr(parent, name, q)
                    del child
        model.is_loaded_in_4bit = True  # peft then wraps the 4-bit layers with its bnb LoRA layer
        if device != "cpu":
            torch.cuda.empty_cache()
    model.train()
    if quant and s.kbit_upcast:  # as axolotl and older TRL set QLoRA up: fp32 upcasts, input grads, checkpointing
        from peft import prepare_model_for_kbit_training
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=s.gradient_checkpointing)
    elif s.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    ref = None
    if s.adapter or quant:
        from peft import LoraConfig, get_peft_model
        targets = "all-linear" if tuple(s.lora_targets) == ("all-linear",) else list(s.lora_targets)
        model = get_peft_model(model, LoraConfig(r=s.lora_r, lora_alpha=2 * s.lora_r, lora_dropout=s.lora_dropout,
                                                 target_modules=targets, task_type="CAUSAL_LM"))
        model.train()
    if s.trainer == "dpo" and s.reference == "model":
        with torch.device(device):
            ref = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16 if s.master_weights_fp32 else dtype,
                                                   attn_implementation=s.attn_implementation)
        ref.eval()
        ref.requires_grad_(False)
    return model, ref, dtype


def _selective_log_softmax(logits, index):
    """TRL's selective_log_softmax (trl/trainer/utils.py, before the fused-head rewrite): one row at a time."""
    import torch
    import torch.nn.functional as F
    if logits.dtype in (torch.float32, torch.float64):
        selected = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
        lse = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
        return selected - lse
    rows = []
    for row_logits, row_labels in zip(logits, index):
        row_logps = F.log_softmax(row_logits, dim=-1)
        rows.append(row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(rows)


def _sequence_logps(model, ids):
    """Sum of next-token log-probs of each sequence (TRL's concatenated_forward, no padding)."""
    logits = model(input_ids=ids).logits
    logps = _selective_log_softmax(logits[:, :-1], ids[:, 1:])
    return logps.sum(-1)


def _loss_fn(model, ref, s: TrainingSetup, device: str):
    """A closure computing the loss of one micro batch the way the scenario's trainer does."""
    import torch
    import torch.nn.functional as F

    vocab = model.config.vocab_size if hasattr(model, "config") else model.get_base_model().config.vocab_size
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    if s.trainer == "dpo":
        def dpo(ids):
            b = ids.shape[0] // 2
            pol = _sequence_logps(model, ids)
            with torch.no_grad():
                if ref is not None:
                    rl = _sequence_logps(ref, ids)
                else:
                    with model.disable_adapter():
                        rl = _sequence_logps(model, ids)
            logits = (pol[:b] - rl[:b]) - (pol[b:] - rl[b:])
            return -F.logsigmoid(0.1 * logits).mean()
        return dpo, vocab
    if s.loss == "hf":
        return (lambda ids: model(input_ids=ids, labels=ids).loss), vocab
    lm_head = base.get_output_embeddings()
    body = base.model

    def shifted(ids):
        hidden = body(input_ids=ids).last_hidden_state
        labels = F.pad(ids, (0, 1), value=-100)[:, 1:]
        return hidden, labels

    if s.loss == "liger":
        from liger_kernel.ops import LigerFusedLinearCrossEntropyFunction as Flce

        def liger(ids):  # as liger's LigerForCausalLMLoss: hidden states contiguous, labels shifted by padding
            hidden, labels = shifted(ids)
            out = Flce.apply(hidden.reshape(-1, hidden.shape[-1]), lm_head.weight, labels.reshape(-1))
            return out[0] if isinstance(out, tuple) else out
        return liger, vocab
    if s.loss == "cut_cross_entropy":
        from cut_cross_entropy import linear_cross_entropy

        def cce(ids):  # as axolotl's cut_cross_entropy plugin: hidden states and the lm_head weight, shifted inside
            hidden = body(input_ids=ids).last_hidden_state
            return linear_cross_entropy(hidden, lm_head.weight, ids, shift=1)
        return cce, vocab
    if s.loss == "chunked":
        from torch.utils.checkpoint import checkpoint

        def chunk_loss(h, y):
            return F.cross_entropy(lm_head(h).float(), y, ignore_index=-100, reduction="sum")

        def chunked(ids):
            hidden, labels = shifted(ids)
            h2, y2 = hidden.reshape(-1, hidden.shape[-1]), labels.reshape(-1)
            total = sum(checkpoint(chunk_loss, h2[i:i + s.loss_chunk_size], y2[i:i + s.loss_chunk_size],
                                   use_reentrant=False) for i in range(0, h2.shape[0], s.loss_chunk_size))
            return total / (y2 != -100).sum()
        return chunked, vocab
    raise ValueError(s.loss)


def _sdpa_choice(arch, s: TrainingSetup, dtype, device: str) -> str:
    """Which kernel torch's SDPA picks for this head layout and dtype (causal, no mask, enable_gqa)."""
    import torch
    if s.attn_implementation != "sdpa" or device == "cpu":
        return s.attn_implementation if device != "cpu" else "cpu"
    cdtype = torch.float32 if s.precision == "fp32" else torch.bfloat16
    q = torch.randn(1, arch.num_heads, 128, arch.head_dim, device=device, dtype=cdtype)
    k = torch.randn(1, arch.num_kv_heads, 128, arch.head_dim, device=device, dtype=cdtype)
    gqa = arch.num_heads != arch.num_kv_heads
    choice = torch._fused_sdp_choice(q, k, k, is_causal=True, enable_gqa=gqa)
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(choice).name
    except Exception:  # noqa: BLE001
        return str(choice)


def measure(sc: Scenario, device: str, cpu_tiny: bool) -> dict:
    """Run the scenario's training steps and return its measured peaks."""
    import torch
    torch.manual_seed(0)
    if cpu_tiny:
        cfg, s = tiny(sc)
    else:
        cfg, s = sc.config(), sc.setup
    tracker = _LiveBytes() if device == "cpu" else None
    if tracker:
        tracker.mode.__enter__()
    t0 = time.time()
    model, ref, dtype = _build(cfg, s, device)
    params = model.get_base_model() if hasattr(model, "get_base_model") else model
    n_params = sum(p.numel() for p in params.parameters())
    if s.load_in_4bit:
        n_params = None  # packed 4-bit parameters do not count elements
    trainable = [p for p in model.parameters() if p.requires_grad]
    kind = s.optimizer
    if kind == "adamw_torch":
        opt = torch.optim.AdamW(trainable, lr=1e-5, foreach=True)
    elif kind == "adamw_torch_fused":
        opt = torch.optim.AdamW(trainable, lr=1e-5, fused=True)
    elif kind == "adamw_8bit":
        import bitsandbytes as bnb
        opt = bnb.optim.AdamW8bit(trainable, lr=1e-5)
    else:
        raise ValueError(kind)
    loss_fn, vocab = _loss_fn(model, ref, s, device)
    seqs = s.sequences
    gen = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(0, vocab, (seqs, s.seq_len), generator=gen).to(device)
    sync = (lambda: torch.cuda.synchronize()) if device != "cpu" else (lambda: None)
    after_load = torch.cuda.memory_allocated() if device != "cpu" else tracker.live
    autocast = torch.autocast(device_type="cuda" if device != "cpu" else "cpu", dtype=torch.bfloat16,
                              enabled=s.master_weights_fp32)

    phases: dict[str, int] = {}
    reserved: dict[str, int] = {}

    def mark(phase):
        """Peak since the previous mark, per phase (max over the measured steps); the overall peak is their max."""
        if device != "cpu":
            torch.cuda.synchronize()
            phases[phase] = max(phases.get(phase, 0), torch.cuda.max_memory_allocated())
            reserved[phase] = max(reserved.get(phase, 0), torch.cuda.max_memory_reserved())
            torch.cuda.reset_peak_memory_stats()
        else:
            phases[phase] = max(phases.get(phase, 0), tracker.peak)
            tracker.reset_peak()

    def hooks():
        """Tensor hooks splitting the backward: loss+lm_head | decoder layers | embedding and the rest."""
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        inner = base.model

        def on_norm(mod, inp, out):
            if out.requires_grad and torch.is_grad_enabled():
                out.register_hook(lambda g: mark("bwd_head"))

        def on_embed(mod, inp, out):
            if out.requires_grad and torch.is_grad_enabled():
                out.register_hook(lambda g: mark("bwd_layers"))
        inner.norm.register_forward_hook(on_norm)
        inner.embed_tokens.register_forward_hook(on_embed)

    if s.trainer != "dpo":
        hooks()

    def step():
        for _ in range(s.gradient_accumulation_steps):
            with autocast:
                loss = loss_fn(ids) / s.gradient_accumulation_steps
            mark("forward")
            loss.backward()
            del loss
            mark("bwd_rest")
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        mark("optimizer")

    for _ in range(WARMUP_STEPS):
        step()
    sync()
    phases.clear()
    reserved.clear()
    if device != "cpu":
        torch.cuda.reset_peak_memory_stats()
        steady = torch.cuda.memory_allocated()
    else:
        tracker.reset_peak()
        steady = tracker.live
    times = []
    for _ in range(MEASURED_STEPS):
        t = time.time()
        step()
        sync()
        times.append(time.time() - t)
    out = {"name": sc.name, "arch": sc.arch, "device": device, "cpu_tiny": cpu_tiny,
           "setup": dataclasses.asdict(s), "params_counted": n_params,
           "trainable_params": sum(p.numel() for p in trainable),
           "trainable_dtypes": sorted({str(p.dtype) for p in trainable}),
           "allocated_after_load": after_load, "peak_by_phase": phases, "allocated_steady": steady,
           "step_seconds": times,
           "wall_seconds": round(time.time() - t0, 1)}
    if device != "cpu":
        free, total = torch.cuda.mem_get_info()
        out.update(max_allocated=max(phases.values()), max_reserved=max(reserved.values()),
                   reserved_now=torch.cuda.memory_reserved(), device_used_now=total - free, device_total=total,
                   context_bytes=(total - free) - torch.cuda.memory_reserved(),
                   sdpa_backend=_sdpa_choice(sc.architecture(), s, dtype, device),
                   gpu=torch.cuda.get_device_name())
    else:
        tracker.mode.__exit__(None, None, None)
        out.update(max_allocated=max(phases.values()))
    return out


def _child(sc_name: str, device: str, cpu_tiny: bool, path: str) -> None:
    sc = next(s for s in ALL_SCENARIOS if s.name == sc_name)
    try:
        res = measure(sc, device, cpu_tiny)
    except Exception as exc:  # noqa: BLE001 - an OOM or a missing wheel is a result, not a crash
        import torch
        oom = isinstance(exc, torch.OutOfMemoryError) if hasattr(torch, "OutOfMemoryError") else False
        res = {"name": sc.name, "arch": sc.arch, "error": f"{type(exc).__name__}: {exc}"[:2000], "oom": oom,
               "traceback": traceback.format_exc()[-4000:]}
        if oom and device != "cpu":
            res["max_allocated_before_oom"] = torch.cuda.max_memory_allocated()
    Path(path).write_text(json.dumps(res, indent=1))


def _versions() -> dict:
    import platform

    import torch
    import transformers
    v = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__}
    from importlib import metadata
    for dist in ("peft", "bitsandbytes", "liger-kernel"):  # metadata only: importing bitsandbytes starts CUDA
        try:
            v[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            v[dist] = "not installed"
    return v


def run(args: argparse.Namespace) -> int:
    import torch  # imported once here so each forked child starts warm
    import transformers  # noqa: F401
    from transformers import AutoModelForCausalLM  # noqa: F401

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = "cpu" if args.cpu_tiny else "cuda"
    pool = {"holdout": HOLDOUT, "issue14": ISSUE14, "issue14_holdout": ISSUE14_HOLDOUT,
            "issue14_hybrid": ISSUE14_HYBRID, "issue14_hybrid_holdout": ISSUE14_HYBRID_HOLDOUT,
            "issue14_cce": ISSUE14_CCE}.get(args.set, SCENARIOS)
    names = args.only.split(",") if args.only else [s.name for s in pool]
    start = time.time()
    table = {"command": " ".join(["python3", "benchmarks/memory/harness.py"] + sys.argv[1:]),
             "peak_measured": "torch.cuda.max_memory_allocated() over steps 2-3 after reset_peak_memory_stats() "
                              "following one warm-up step (optimizer states allocated)",
             "versions": _versions(), "model_commit": args.commit,
             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "results": []}
    ctx = mp.get_context("spawn" if torch.cuda.is_initialized() else "fork")  # fork only before CUDA starts
    for name in names:
        if time.time() - start > args.deadline:
            table["results"].append({"name": name, "skipped": "deadline"})
            continue
        sc = next(s for s in ALL_SCENARIOS if s.name == name)
        path = out / f"scenario_{len(table['results']):02d}.json"
        proc = ctx.Process(target=_child, args=(name, device, args.cpu_tiny, str(path)))
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
        cfg, s = tiny(sc) if args.cpu_tiny else (None, sc.setup)
        arch = sc.architecture() if not args.cpu_tiny else architecture_from_config(cfg)
        try:
            est = estimate_memory(arch, s)
            res["predicted_at_run"] = est.allocated_bytes - (est.components["workspace"] if args.cpu_tiny else 0)
        except Exception as exc:  # noqa: BLE001
            res["predicted_at_run"] = f"{type(exc).__name__}: {exc}"
        table["results"].append(res)
        (out / args.table).write_text(json.dumps(table, indent=1))
        meas, pred = res.get("max_allocated"), res.get("predicted_at_run")
        if isinstance(meas, int) and isinstance(pred, int):
            print(f"{name:48s} measured {meas / 2**30:8.3f} GiB  predicted {pred / 2**30:8.3f} GiB  "
                  f"error {100 * (pred - meas) / meas:+6.1f}%  ({res.get('wall_seconds')}s, "
                  f"{res.get('sdpa_backend', '')})", flush=True)
        else:
            print(f"{name:48s} {res.get('error', res)!s:.300}", flush=True)
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
    r.add_argument("--deadline", type=float, default=480.0, help="start no new scenario after this many seconds")
    r.add_argument("--timeout", type=float, default=float(os.environ.get("HARNESS_TIMEOUT", 150)), help="per scenario")
    r.add_argument("--table", default="measured_h200.json")
    r.add_argument("--set", choices=("main", "holdout", "issue14", "issue14_holdout", "issue14_hybrid",
                                     "issue14_hybrid_holdout", "issue14_cce"),
                   default="main")
    r.add_argument("--commit", default="", help="the seqprof commit whose predictions are recorded")
    args = ap.parse_args()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
