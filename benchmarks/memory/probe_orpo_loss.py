#!/usr/bin/env python3
"""ORPO's loss on materialised logits, on the CPU, with the casts CUDA autocast makes written out (log_softmax and
cross_entropy are on its float32 list): the live bytes of every storage at each backward node, in units of one bf16
logits tensor. It showed the walk's order (row log-softmaxes first, then the chosen NLL) and that autograd sums the
logits' two gradients out of place; its peak (4.0 logits) is the walk's. The H200 runs kept one logits tensor more
(measured_h200_issue14_orpo.json), which this emulation does not show.

    /tmp/trlvenv/bin/python benchmarks/memory/probe_orpo_loss.py   # torch on the CPU
"""
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness
B, S, V, h = 2, 64, 4096, 256
torch.manual_seed(0)
tr = harness._LiveBytes()
y = torch.randn(2 * B, S, h, dtype=torch.bfloat16, requires_grad=True)
W = torch.randn(V, h, dtype=torch.bfloat16)
Wt = W.t().contiguous()
L = 2 * 2 * B * S * V
labels = torch.randint(0, V, (2 * B, S))
seen = set()
def sls(logits, index):  # selective_log_softmax's bf16 branch, with CUDA autocast's fp32 cast made explicit
    out = []
    for rl, rb in zip(logits, index):
        lp = F.log_softmax(rl.float(), dim=-1)
        out.append(lp.gather(-1, rb.unsqueeze(-1)).squeeze(-1))
    return torch.stack(out)
with tr.mode:
    base = tr.live
    logits = y @ Wt
    lg = logits[:B][..., :-1, :].contiguous(); lb = labels[:B][..., 1:].contiguous()
    nll = F.cross_entropy(lg.view(-1, V).float(), lb.view(-1)); del lg
    lp = sls(logits[:, :-1, :], labels[:, 1:]).sum(-1)
    loss = nll - lp.float().mean(); del logits
    print(f"forward peak {(tr.peak-base)/L:.3f} live {(tr.live-base)/L:.3f}")
    def walk(fn):
        if fn is None or fn in seen: return
        seen.add(fn)
        name = type(fn).__name__
        fn.register_prehook(lambda g, name=name: print(f"  pre  {name:28s} live {(tr.live-base)/L:.3f} peak {(tr.peak-base)/L:.3f}") or tr.reset_peak())
        for nxt, _ in fn.next_functions: walk(nxt)
    walk(loss.grad_fn)
    tr.reset_peak()
    loss.backward()
    print(f"  end live {(tr.live-base)/L:.3f} peak {(tr.peak-base)/L:.3f}")
