"""The step-time validation plan: setups, the fit grid, and holdout batches drawn from real length distributions.

`python benchmarks/runtime/scenarios.py` (CPU) writes scenarios.json, which harness.py runs on the GPU.
- fit: DEFAULT_SHAPES (uniform rows x length) for the FIT setups; the H200 calibration is fitted on these only.
- holdout: for every setup (the fit ones and two never fitted: a full fine-tune with checkpointing of another
  size and a DPO run with a reference model), each batching strategy's epoch on a real length distribution,
  a seeded sample of its batches (rows x padded length); the model predicts those batches' time without
  having seen them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from seqprof.batching.buckets import optimal_boundaries  # noqa: E402
from seqprof.batching.simulate import (  # noqa: E402
    _capped_counts,
    batch_starts,
    bucketed_shuffle_epoch,
    pack_bfd,
)
from seqprof.dataset.histogram import LengthHistogram  # noqa: E402
from seqprof.dataset.profile import Profile  # noqa: E402
from seqprof.predict.calibrate import DEFAULT_SHAPES  # noqa: E402
from seqprof.predict.memory.setup import TrainingSetup  # noqa: E402

CONFIGS = ROOT / "benchmarks" / "memory" / "configs"
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
SETUPS = {
    "qwen3-0.6b_full": ("qwen3-0.6b", TrainingSetup(), True),
    "llama3.2-1b_full_gc": ("llama3.2-1b", TrainingSetup(gradient_checkpointing=True), True),
    "qwen3-4b_lora_all_gc": ("qwen3-4b", TrainingSetup(adapter="lora", lora_targets=ALL_LINEAR,
                                                       gradient_checkpointing=True), True),
    "llama3.1-8b_lora_qv_gc": ("llama3.1-8b", TrainingSetup(adapter="lora", gradient_checkpointing=True), True),
    "qwen3-1.7b_full_gc": ("qwen3-1.7b", TrainingSetup(gradient_checkpointing=True), False),
    "qwen2.5-0.5b_dpo_full": ("qwen2.5-0.5b", TrainingSetup(trainer="dpo"), False),
}
# Never measured before the fitted model was frozen (commit of h200.json): other sizes, widths, LoRA targets,
# a DPO run whose reference is the adapter-free base, other length distributions and batch settings.
FRESH_SETUPS = {
    "llama3.2-3b_full_gc": ("llama3.2-3b", TrainingSetup(gradient_checkpointing=True)),
    "qwen2.5-1.5b_lora_qv": ("qwen2.5-1.5b", TrainingSetup(adapter="lora")),
    "qwen3-8b_lora_all_gc": ("qwen3-8b", TrainingSetup(adapter="lora", lora_targets=ALL_LINEAR,
                                                       gradient_checkpointing=True)),
    "qwen2.5-7b_lora_dpo_gc": ("qwen2.5-7b", TrainingSetup(adapter="lora", trainer="dpo", reference="lora_base",
                                                          gradient_checkpointing=True)),
}
SAMPLED_BATCHES = 6
STRATEGY_NAMES = ("fixed_padding", "random_shuffle", "sorted_static", "bucketed_shuffle", "packing_bfd")


def _paper_histogram(name: str) -> LengthHistogram:
    """One of the packing paper's published histograms (tests/data/reference/packing_paper.json)."""
    paper = json.loads((ROOT / "tests" / "data" / "reference" / "packing_paper.json").read_text())
    return LengthHistogram.from_mapping({i + 1: int(c) for i, c in enumerate(paper[name]["counts"]) if c})


def distributions() -> dict[str, tuple[LengthHistogram, int, dict]]:
    """name -> (histogram, max_seq_length, batching): the embedded chat dataset under Qwen3's tokenizer (its
    saved profile) and the packing paper's Wikipedia histogram."""
    return {"python_docs_chat": (Profile.load(HERE / "python_docs_chat_qwen3.json").sequence, 2048, {"batch_size": 8}),
            "wikipedia_packing_paper": (_paper_histogram("wikipedia"), 512, {"token_budget": 16384})}


def fresh_distributions() -> dict[str, tuple[LengthHistogram, int, dict]]:
    """The packing paper's SQuAD histogram, and long multi-turn chats (benchmarks/corpora.py, seed 7) under
    Qwen3's tokenizer."""
    return {"squad_packing_paper": (_paper_histogram("squad_1_1"), 384, {"batch_size": 16}),
            "stdlib_long_chats": (Profile.load(HERE / "stdlib_chat_qwen3.json").sequence, 4096, {"token_budget": 8192})}


def strategy_batches(hist: LengthHistogram, max_len: int, cut: dict, seed: int) -> dict[str, dict]:
    """Each strategy's epoch: its batch count, Σ tokens and Σ rows·len² over all batches, and a sample of shapes."""
    counts = _capped_counts(hist, max_len)  # rows longer than max_len truncated, as the trainer does
    lengths = np.repeat(np.arange(counts.size), counts)
    rng = np.random.default_rng(seed)
    fixed_rows = cut.get("batch_size") or max(1, cut["token_budget"] // max_len)
    boundaries = optimal_boundaries(hist, 6, max_len=max_len)
    out = {}
    for name in STRATEGY_NAMES:
        if name in ("fixed_padding", "packing_bfd"):
            n = len(lengths) if name == "fixed_padding" else pack_bfd(hist, max_len)
            batches = -(-n // fixed_rows)
            shapes = [(fixed_rows, max_len)] * batches
            if n % fixed_rows:
                shapes[-1] = (n % fixed_rows, max_len)
        else:
            if name == "random_shuffle":
                order = rng.permutation(len(lengths))
                starts = batch_starts(lengths[order], **cut)
            elif name == "sorted_static":
                order = np.argsort(-lengths, kind="stable")
                starts = batch_starts(lengths[order], **cut)
            else:
                order, starts = bucketed_shuffle_epoch(lengths, [int(b) for b in boundaries], rng, **cut)
            ordered = lengths[order]
            ends = list(starts[1:]) + [len(ordered)]
            shapes = [(int(e - s), int(ordered[s:e].max())) for s, e in zip(starts, ends)]
        pick = rng.choice(len(shapes), size=min(SAMPLED_BATCHES, len(shapes)), replace=False)
        out[name] = {"batches": len(shapes), "tokens": int(sum(r * n for r, n in shapes)),
                     "attention": int(sum(r * n * n for r, n in shapes)), "real_tokens": int(lengths.sum()),
                     "sample": [list(shapes[i]) for i in sorted(pick)]}
    return out


def main() -> None:
    fresh = "--fresh" in sys.argv
    plan = {"setups": {}, "fit": {}, "holdout": {}}
    setups = {k: (m, s, False) for k, (m, s) in FRESH_SETUPS.items()} if fresh else SETUPS
    for name, (model, setup, fitted) in setups.items():
        plan["setups"][name] = {"model": model, "setup": asdict(setup), "fit": fitted}
        if fitted:
            plan["fit"][name] = [list(s) for s in DEFAULT_SHAPES]
    dists = fresh_distributions() if fresh else distributions()
    for seed, (dist, (hist, max_len, cut)) in enumerate(dists.items(), start=10 if fresh else 0):
        plan["holdout"][dist] = {"max_seq_length": max_len, **cut,
                                 "strategies": strategy_batches(hist, max_len, cut, seed)}
    (HERE / ("scenarios_fresh.json" if fresh else "scenarios.json")).write_text(json.dumps(plan, indent=1))
    for dist, d in plan["holdout"].items():
        print(dist, {k: (v["batches"], v["sample"]) for k, v in d["strategies"].items()})


if __name__ == "__main__":
    main()
