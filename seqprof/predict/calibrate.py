"""`seqprof calibrate`: time real training steps of a randomly initialised model on this machine's GPU and fit
the step-time model's seconds per unit (seqprof.predict.steptime) to them.

Needs torch, transformers and a CUDA GPU (`pip install 'seqprof[calibrate]'`); nothing is downloaded: the
model is built from its config.json with random weights. A step is what a trainer runs: forward with the
labels (transformers' loss), backward, gradient clipping, a fused AdamW step, zero_grad; timed between
`torch.cuda.synchronize()` calls after warm-up steps of the same shape.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.predict.memory.setup import TrainingSetup

# (rows, padded length) of the micro batches timed: small to large tokens, short to long rows.
DEFAULT_SHAPES = ((1, 128), (4, 128), (16, 256), (1, 1024), (4, 512), (8, 1024), (2, 2048), (1, 4096),
                  (4, 2048), (2, 4096), (1, 8192))


def _require_gpu():
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        raise SeqprofError("seqprof calibrate needs torch and transformers",
                           fix="pip install 'seqprof[calibrate]' on the machine with the GPU") from None
    if not torch.cuda.is_available():
        raise SeqprofError("seqprof calibrate needs a CUDA GPU and none is visible",
                           fix="run it on the training machine")
    return torch


class StepTimer:
    """One model under one setup on the GPU, timing optimizer steps of given shapes."""

    def __init__(self, config: Mapping[str, Any], setup: TrainingSetup) -> None:
        torch = _require_gpu()
        from transformers import AutoConfig, AutoModelForCausalLM

        self.torch, self.setup = torch, setup
        cfg = AutoConfig.for_model(**config)
        cfg.use_cache = False
        self.vocab = cfg.vocab_size
        dtype = torch.bfloat16 if setup.precision == "bf16" else (
            torch.float16 if setup.precision == "fp16" else torch.float32)
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=setup.attn_implementation)
        model.train()
        if setup.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if setup.adapter:
            from peft import LoraConfig, get_peft_model

            targets = list(setup.lora_targets)
            model = get_peft_model(model, LoraConfig(r=setup.lora_r, lora_alpha=2 * setup.lora_r,
                                                     target_modules=targets, task_type="CAUSAL_LM"))
            if setup.gradient_checkpointing:
                model.enable_input_require_grads()
            model.train()
        self.ref = None
        if setup.trainer == "dpo" and setup.reference == "model":
            with torch.device("cuda"):
                self.ref = AutoModelForCausalLM.from_config(cfg, dtype=dtype,
                                                            attn_implementation=setup.attn_implementation)
            self.ref.eval().requires_grad_(False)
        self.model = model
        params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=1e-5, fused=True)
        self.params = params

    def _loss(self, ids):
        torch = self.torch
        if self.setup.trainer != "dpo":
            return self.model(input_ids=ids, labels=ids).loss
        import torch.nn.functional as F

        def logps(model):
            logits = model(input_ids=ids).logits[:, :-1]
            rows = [F.log_softmax(lg.float(), -1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
                    for lg, y in zip(logits, ids[:, 1:])]
            return torch.stack(rows).sum(-1)

        half = ids.shape[0] // 2
        policy = logps(self.model)
        with torch.no_grad():
            if self.ref is not None:
                reference = logps(self.ref)
            else:
                with self.model.disable_adapter():
                    reference = logps(self.model)
        margin = (policy[:half] - reference[:half]) - (policy[half:] - reference[half:])
        return -F.logsigmoid(0.1 * margin).mean()

    def step(self, rows: int, length: int) -> None:
        torch = self.torch
        ids = torch.randint(0, self.vocab, (rows, length), device="cuda")
        loss = self._loss(ids)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def time(self, rows: int, length: int, *, warmup: int = 2, repeats: int = 3) -> float:
        """Median seconds of one optimizer step of `rows` x `length` tokens."""
        torch = self.torch
        for _ in range(warmup):
            self.step(rows, length)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            self.step(rows, length)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    def close(self) -> None:
        del self.model, self.ref, self.optimizer, self.params
        self.torch.cuda.empty_cache()


def measure(config: Mapping[str, Any], setup: TrainingSetup, shapes: Iterable[Sequence[int]], *,
            warmup: int = 2, repeats: int = 3, deadline: float | None = None,
            on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """[{rows, length, seconds}] for each shape that fits in memory (an OOM is recorded, not fatal)."""
    timer = StepTimer(config, setup)
    out = []
    try:
        for rows, length in shapes:
            if deadline is not None and time.monotonic() > deadline:
                break
            try:
                row = {"rows": int(rows), "length": int(length), "seconds": timer.time(rows, length, warmup=warmup,
                                                                                     repeats=repeats)}
            except timer.torch.cuda.OutOfMemoryError:
                timer.optimizer.zero_grad(set_to_none=True)
                timer.torch.cuda.empty_cache()
                row = {"rows": int(rows), "length": int(length), "seconds": None, "oom": True}
            out.append(row)
            if on_row:
                on_row(row)
    finally:
        timer.close()
    return out


def calibrate(model_config: str, *, gpu: str | None = None, setup: TrainingSetup | None = None,
              shapes: Sequence[Sequence[int]] = DEFAULT_SHAPES) -> tuple[Any, list[dict]]:
    """Time DEFAULT_SHAPES on this GPU and fit a Calibration (returned with the measurements)."""
    from seqprof.predict.architecture import architecture_from_config, read_model_config, text_model_config
    from seqprof.predict.steptime import fit_calibration, model_costs, shipped_calibration

    torch = _require_gpu()
    top, config_path = read_model_config(model_config)
    arch = architecture_from_config(top, source=config_path)
    config = text_model_config(top)  # a multimodal config: its language model is what trains
    setup = setup or TrainingSetup()
    name = gpu or torch.cuda.get_device_name()
    try:  # the table's name ("NVIDIA H200" -> "H200 141GB"): its data-sheet figures bound the fit
        from seqprof.predict.gpus import gpu_memory_bytes

        name = gpu_memory_bytes(name)[0]
    except SeqprofError:
        pass  # a GPU seqprof has no figures for: fitted without bounds, under the name given
    rows = measure(config, setup, shapes)
    costs = model_costs(arch, setup)
    fitted = [(costs, r["rows"], r["length"], r["seconds"]) for r in rows if r["seconds"]]
    if len(fitted) < 4:
        raise SeqprofError("too few shapes fitted in GPU memory to calibrate", fix="calibrate a smaller model")
    source = (f"measured by seqprof calibrate on {torch.cuda.get_device_name()} with {arch.model_type} "
              f"({Path(model_config).name}), {len(fitted)} shapes, {json.dumps(asdict(setup), default=str)[:200]}")
    return fit_calibration(fitted, name, source, start=shipped_calibration()), rows
