"""Speed of reading configs into Plans, against plain PyYAML loading of the same files.

    .venv/bin/python benchmarks/bench_read_plan.py

Prints, for every YAML/JSON file under ../shared/configs: read_plan's wall time with the
default composer (libyaml), the same with ruamel.yaml's pure-Python composer, and a baseline
of ``yaml.load(text, CSafeLoader)`` (values only: no lines, no dialect); then the ratios, and
the time to refuse a billion-laughs file. read_plan must stay within a small factor of the
baseline so that linting a repository of configs takes about a second.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import yaml

from seqprof.config import loader as config_loader
from seqprof.config.read import read_plan
from seqprof.errors import SeqprofError

CONFIGS = Path(__file__).resolve().parents[2] / "shared" / "configs"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    files = sorted(p for p in CONFIGS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        print(f"no configs under {CONFIGS}")
        return 1
    texts = [p.read_text() for p in files]
    read_plan(files[0])  # imports outside the timing

    baseline = timed(lambda: [yaml.load(t, Loader=yaml.CSafeLoader) for t in texts])
    fast = timed(lambda: [read_plan(p) for p in files])
    original = config_loader.default_backend
    config_loader.default_backend = lambda: "ruamel"  # type: ignore[assignment]
    try:
        slow = timed(lambda: [read_plan(p) for p in files])
    finally:
        config_loader.default_backend = original  # type: ignore[assignment]

    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)]
    bomb = "\n".join(lines) + "\n"

    def refuse() -> None:
        try:
            config_loader.parse_config(bomb, "lol.yaml")
        except SeqprofError:
            return
        raise AssertionError("billion laughs was accepted")

    laughs = timed(refuse)
    print(f"{len(files)} config files")
    print(f"baseline yaml.load(CSafeLoader):     {baseline:7.3f} s")
    print(f"read_plan (libyaml composer):        {fast:7.3f} s   {fast / baseline:5.1f}x baseline")
    print(f"read_plan (ruamel pure composer):    {slow:7.3f} s   {slow / baseline:5.1f}x baseline")
    print(f"billion laughs refused in            {laughs * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
