"""How many training processes the project's own command lines start on a config.

GRPO's generation batch, TRL's default `per_device_train_batch_size x processes x gradient_accumulation_steps`,
must hold whole groups of num_generations completions, and the process count is not in the file: it is what
`accelerate launch --num_processes=3`, `torchrun --nproc_per_node 4` or the accelerate config a line passes says.
A plain `python train.py` starts one. Read from the same command lines that name the config
(seqprof.config.launches.command_lines); nothing is run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from seqprof.config.launches import PRINTED, script_lines, shortened
from seqprof.config.project_fields import project_root


@dataclass(frozen=True)
class LaunchedProcesses:
    """The process count every command line running a script on the config agrees on."""

    count: int
    command: str  # the first such line, shortened
    where: str  # file:line, relative to the project root

    def describe(self) -> str:
        return f"`{self.command}` starts, {self.where}"


_ACCELERATE = re.compile(r"(?:^|[\s;&|(])(?:accelerate\s+launch|accelerate-launch|-m\s+accelerate\.commands\.launch)\s")
_TORCHRUN = re.compile(r"(?:^|[\s;&|(])(?:torchrun|-m\s+torch\.distributed\.(?:run|launch))\s")
_DEEPSPEED = re.compile(r"(?:^|[\s;&|(])deepspeed\s")
# starters whose process count lies outside the line: job schedulers, MPI, TRL's own CLI (accelerate underneath)
_ELSEWHERE = re.compile(r"(?:^|[\s;&|(])(?:srun|mpirun|mpiexec|sbatch|qsub|ray|trl|python\S*\s+-m\s+trl)\s")
_PYTHON = re.compile(r"(?:^|[\s;&|(])python[\d.]*\s")


def _option(line: str, *names: str) -> str | None:
    """The value a line gives one of the options *names* (`--num_processes=3`, `--nproc_per_node 4`)."""
    for name in names:
        found = re.findall(rf"(?<![\w-]){re.escape(name)}(?:=|\s+)([^\s\\;&|]+)", line)
        if found:
            return found[-1].strip("\"'")
    return None


def _whole(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and int(text) >= 1 else None


def _accelerate_config_processes(line: str, root: Path, folder: Path) -> int | None:
    """num_processes of the accelerate config the line passes (`--config_file recipes/zero2.yaml`), when it holds
    a whole number and runs on one or more machines as written."""
    import yaml

    given = _option(line, "--config_file", "--config-file")
    if given is None:
        return None
    for place in (root / given, folder / given):
        if place.is_file():
            try:
                data = yaml.safe_load(place.read_text(encoding="utf-8", errors="replace"))
            except (yaml.YAMLError, OSError):
                return None
            if not isinstance(data, dict):
                return None
            if str(data.get("distributed_type", "")).upper() == "NO":
                return 1
            count = data.get("num_processes")
            return count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else None
    return None


def _line_processes(line: str, root: Path, folder: Path) -> int | None:
    """The processes one command line starts, None where the line does not say (a variable, a scheduler, a
    launcher left to its own default config)."""
    if _ELSEWHERE.search(line):
        return None
    if _ACCELERATE.search(line):
        given = _option(line, "--num_processes", "--num-processes")
        if given is not None:
            return _whole(given)
        if _option(line, "--num_machines", "--num-machines") not in (None, "1"):
            return None
        return _accelerate_config_processes(line, root, folder)
    if _TORCHRUN.search(line):
        per_node, nodes = _option(line, "--nproc_per_node", "--nproc-per-node"), _option(line, "--nnodes")
        if per_node is None or _whole(per_node) is None or (nodes is not None and _whole(nodes) is None):
            return None
        return _whole(per_node) * (_whole(nodes) or 1)
    if _DEEPSPEED.search(line):
        gpus, nodes = _option(line, "--num_gpus", "--num-gpus"), _option(line, "--num_nodes", "--num-nodes")
        return _whole(gpus) if nodes in (None, "1") else None
    return 1 if _PYTHON.search(line) else None


def launched_processes(config_path: str | Path) -> LaunchedProcesses | None:
    """The process count when every command line of the project that runs a script on *config_path* starts the
    same, stated number; None when no line does, or one leaves it open, or two differ."""
    return _launched_processes(str(Path(config_path).resolve()))


@lru_cache(maxsize=256)
def _launched_processes(config_path: str) -> LaunchedProcesses | None:
    path = Path(config_path)
    if not path.is_file():
        return None
    root = project_root(path)
    runs = [(file, number, line) for file, number, line in script_lines(path) if not PRINTED.match(line)]
    counts = {_line_processes(line, root, (root / file).parent) for file, _, line in runs}
    if not runs or len(counts) != 1 or None in counts:
        return None
    file, number, line = runs[0]
    return LaunchedProcesses(counts.pop(), shortened(line), f"{file}:{number}")
