#!/usr/bin/env python3
"""How many outlier columns LLM.int8 finds in a random-init model's linear inputs: what the 8-bit walk leaves out.

bitsandbytes' MatMul8bitLt keeps, beside each linear's input, `subA`: the input's columns holding any |x| > 6.0
(llm_int8_threshold), in the input's dtype. A trained model has a handful of such feature dimensions (the LLM.int8
paper's outlier features); a randomly initialised one (the measured scenarios' models: N(0, 0.02) weights) has many
in the down_proj input act(gate(x)) * up(x), whose spread grows with hidden_size. This draws an RMSNorm output (unit
rows) for the tokens of each measured 8-bit scenario, passes it through one random-init gated MLP of the shape, and
counts the outlier columns of the q/k/v-or-gate/up input and of the down_proj input; their fp32 bytes over all layers
are of the order of the walk's shortfall on those runs (drawn 0.51, 3.73, 3.61 GB; short
0.27, 1.89, 3.13 GB) (tests/test_memory_trainers_measured.py, WITHIN).

    python3 benchmarks/memory/int8_outliers.py   # CPU, a minute
"""

from __future__ import annotations

import torch

SHAPES = (  # scenario, hidden, intermediate, layers, tokens of a micro batch
    ("sft_hf_qwen3-1.7b 8-bit b2 s2048 (probe_int8.py)", 2048, 6144, 28, 4096),
    ("sft_hf_qwen3-4b_lora16_8bit_prep_gc_b2_s2048", 2560, 9728, 36, 4096),
    ("sft_hf_llama3.2-3b_lora16_8bit_prep_gc_b4_s1024", 3072, 8192, 28, 4096),
)
THRESHOLD, STD = 6.0, 0.02


def outlier_columns(hidden: int, intermediate: int, tokens: int) -> tuple[int, int]:
    x = torch.randn(tokens, hidden)
    x = x / x.pow(2).mean(-1, keepdim=True).sqrt()  # RMSNorm with its weight at 1, as initialised
    gate, up = torch.randn(hidden, intermediate) * STD, torch.randn(hidden, intermediate) * STD
    down_input = torch.nn.functional.silu(x @ gate) * (x @ up)
    return int((x.abs() > THRESHOLD).any(0).sum()), int((down_input.abs() > THRESHOLD).any(0).sum())


def main() -> None:
    torch.manual_seed(0)
    for name, h, f, layers, n in SHAPES:
        normed, down = outlier_columns(h, f, n)
        held = 4 * (2 * normed + down) * n * layers  # fp32 inputs; the normed one feeds q/k/v and gate/up
        print(f"{name}: {normed} of {h} normed-input columns and {down} of {f} down_proj-input columns over "
              f"{THRESHOLD}: {held / 1e9:.2f} GB of outlier columns kept over {layers} layers")


if __name__ == "__main__":
    main()
