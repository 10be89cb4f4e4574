"""The memory estimate as `seqprof memory` prints it: a breakdown table, or the DESIGN.md JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from seqprof.lint.facts import NEAR_GPU_LIMIT
from seqprof.predict.memory import COMPONENT_LABELS, GiB
from seqprof.predict.memory_plan import MemoryFacts


def component_label(name: str) -> str:
    """The printed name of a MemoryEstimate component (one table: memory.COMPONENT_LABELS)."""
    return COMPONENT_LABELS.get(name, name.replace("_", " "))


def format_memory(facts: MemoryFacts) -> str:
    """The breakdown table `seqprof memory` prints."""
    if not facts.available or facts.estimate is None:
        return f"memory: {facts.note}\n"
    est, s, a = facts.estimate, facts.setup, facts.architecture
    assert s is not None and a is not None
    lines = [f"model: {a.model_type}, {a.param_count() / 1e9:.2f}B params, {a.num_layers} layers, hidden "
             f"{a.hidden_size}, vocab {a.vocab_size:,} ({'tied' if a.tie_word_embeddings else 'untied'})",
             f"setup: {s.sequences} x {s.seq_len} tokens, {s.precision}"
             + (", fp32 master weights" if s.master_weights_fp32 else "")
             + (f", LoRA r={s.lora_r} on {', '.join(s.lora_targets)}" if s.adapter else ", full fine-tune")
             + (", 4-bit" if s.load_in_4bit else "") + (", 8-bit" if s.load_in_8bit else "")
             + (", gradient checkpointing" if s.gradient_checkpointing else "")
             + f", {s.attn_implementation}, {s.optimizer}" + (f", {s.loss} loss" if s.loss != "hf" else "")
             + (f", {s.trainer} (reference: {s.reference})" if s.is_preference else ""),
             f"peak at: {est.peak_phase}", ""]
    rows = [(component_label(k), v) for k, v in est.components.items() if v]  # every part of the peak
    width = max(len(label) for label, _ in rows)
    lines.append(f"{'component':<{width}}  {'GiB':>9}  {'share':>6}")
    for label, value in rows:
        lines.append(f"{label:<{width}}  {value / GiB:9.2f}  {100 * value / est.peak_bytes:5.1f}%")
    lines.append(f"{'peak':<{width}}  {est.peak_bytes / GiB:9.2f}")
    if facts.gpu_bytes:
        verdict = ("does NOT fit" if facts.over_budget else
                   "fits, within 10% of the limit" if (facts.headroom or 0) < NEAR_GPU_LIMIT else "fits")
        lines.append(f"{'GPU ' + (facts.gpu_name or ''):<{width}}  {facts.gpu_bytes / GiB:9.2f}  {verdict}")
        # decimal GB as cards are sold (80GB = 80e9 bytes) vs binary GiB: say which budget was checked
        lines.append(f"budget: {facts.gpu_name} = {facts.gpu_bytes:,} bytes = {facts.gpu_bytes / GiB:.2f} GiB")
    lines.append("")
    model_notes = (*getattr(a, "notes", ()), *((f"not modelled: {a.unmodelled}",) if getattr(a, "unmodelled", "")
                                               else ()))
    lines += [f"note: {n}" for n in (*model_notes, *facts.assumptions, *est.notes)]
    return "\n".join(lines) + "\n"


def memory_json(facts: MemoryFacts) -> dict[str, Any]:
    """The JSON `seqprof memory --format json` prints: peak_bytes and components{} (DESIGN.md)."""
    if not facts.available or facts.estimate is None:
        return {"available": False, "note": facts.note, "peak_bytes": None, "components": {}}
    out = facts.estimate.to_dict()
    out.update(available=True, note=facts.note, assumptions=list(facts.assumptions),
               setup={k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(facts.setup).items()},
               architecture={k: v for k, v in asdict(facts.architecture).items()},
               gpu={"name": facts.gpu_name, "bytes": facts.gpu_bytes, "fits": not facts.over_budget,
                    "headroom": facts.headroom} if facts.gpu_bytes else None)
    return out
