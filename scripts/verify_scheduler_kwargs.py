"""Check keys/scheduler_kwargs.json against the real transformers.optimization.get_scheduler.

    python scripts/verify_scheduler_kwargs.py       # in an environment with torch and one transformers release

For every lr_scheduler_type the installed release knows and every keyword any release's schedule function takes
(plus num_warmup_steps again), it builds the scheduler on a one-parameter SGD optimizer the way the Trainer does
(get_scheduler(name, optimizer, num_warmup_steps=10, num_training_steps=100, scheduler_specific_kwargs=...)), and
records what happens: a TypeError, a schedule that differs from the one built without the kwargs (read), or the
same schedule (not read). That is set beside what seqprof's table says for that release (SP462: not read; SP463:
refused) and every disagreement is printed; the exit status is the number of them. Values are chosen to change a
schedule that reads them (min_lr_rate 0.5, num_cycles 3, power 2 ...).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "seqprof" / "config" / "dialects" / "keys" / "scheduler_kwargs.json"
VALUES = {"min_lr_rate": 0.5, "min_lr": 0.05, "num_cycles": 3, "power": 2.0, "lr_end": 0.05, "timescale": 3,
          "warmup_lr_rate": 0.5, "min_lr_ratio": 0.5, "num_decay_steps": 30, "num_stable_steps": 40,
          "warmup_type": "cosine", "decay_type": "linear", "num_warmup_steps": 5, "num_training_steps": 50,
          "last_epoch": -1}
REQUIRED = {"warmup_stable_decay": {"num_decay_steps": 30, "num_stable_steps": 60},
            "cosine_with_min_lr": {"min_lr_rate": 0.5}, "cosine_warmup_with_min_lr": {"min_lr_rate": 0.5}}


def _release(version: str, known: list[str]) -> str:
    """The generated release standing for *version* (same minor)."""
    minor = version.split(".")[:2]
    return next(v for v in known if v.split(".")[:2] == minor)


def _trajectory(get_scheduler, torch, name: str, kwargs: dict) -> list[float] | str:
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    try:
        scheduler = get_scheduler(name, optimizer, num_warmup_steps=10, num_training_steps=100,
                                  scheduler_specific_kwargs=dict(kwargs))
    except (TypeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    rates = []
    for _ in range(100):
        optimizer.step()
        if name == "reduce_lr_on_plateau":
            scheduler.step(1.0)
        else:
            scheduler.step()
        rates.append(round(optimizer.param_groups[0]["lr"], 9))
    return rates


def main() -> int:
    import torch
    import transformers
    from transformers.optimization import get_scheduler

    table = json.loads(TABLE.read_text())["versions"]
    release = _release(transformers.__version__, list(table))
    use = table[release]
    keywords = sorted({k for one in table.values() for u in one.values() for k in (u["takes"] or ())} |
                      {"num_warmup_steps"})
    disagreements = checked = 0
    for name, said in sorted(use.items()):
        if said["takes"] is None:
            continue  # **kwargs (ReduceLROnPlateau, GreedyLR): torch's own arguments, not judged
        base = dict(REQUIRED.get(name, {}))
        plain = _trajectory(get_scheduler, torch, name, base)
        for key in keywords:
            if key in base:
                continue
            got = _trajectory(get_scheduler, torch, name, {**base, key: VALUES[key]})
            measured = "refused" if isinstance(got, str) else "unread" if got == plain else "read"
            pairs = [p for p in said["not_both"] if key in p and set(p) - {key} <= set(base)]
            expected = ("unread" if not said["reads"] else
                        "refused" if key in said["passed"] or key not in said["takes"] or pairs else "read")
            if expected == "read" and measured == "unread" and key == "last_epoch":
                measured = "read"  # -1 is its default: a value the function takes that changes nothing
            checked += 1
            if measured != expected:
                disagreements += 1
                print(f"{release} {name} {key}: table says {expected}, get_scheduler {measured}"
                      + (f" ({got})" if isinstance(got, str) else ""))
    for name, said in sorted(use.items()):  # no kwargs at all, where the table says one of a pair is needed
        if said["reads"] and said["one_of"]:
            got = _trajectory(get_scheduler, torch, name, {})
            checked += 1
            if not isinstance(got, str):
                disagreements += 1
                print(f"{release} {name} without kwargs: table says refused, get_scheduler built it")
    print(f"transformers {transformers.__version__} (table {release}): {checked} cases, "
          f"{disagreements} disagreements")
    return disagreements


if __name__ == "__main__":
    sys.exit(main())
