"""GPU names and memory sizes -> bytes, so a memory estimate can say "fits" or "OOM" for a named card."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from seqprof.errors import SeqprofError

_MIB = 2**20

# Total device memory as the driver reports it (nvidia-smi "MiB" / rocm-smi), not the marketing figure:
# an "80GB" H100 has 81,559 MiB (85.5e9 bytes), an H200 143,771 MiB (seen on this project's H200s).
# The usable budget is this minus the CUDA context, which memory.estimate_memory adds as a component.
GPU_MEMORY_MIB: Mapping[str, int] = {
    "H100 80GB": 81559, "H100 NVL 94GB": 95830, "H100 PCIe 80GB": 81559, "H800 80GB": 81559,
    "H200 141GB": 143771, "H200 NVL 141GB": 143771, "GH200 96GB": 97871, "GH200 144GB": 146941,
    "B200 180GB": 183359, "GB200 186GB": 189471, "B300 288GB": 275040,
    # GB10 (DGX Spark): 128 GB of LPDDR5x shared by CPU and GPU; the OS and the CPU side take their share
    "DGX Spark GB10 128GB": 122070,
    "A100 40GB": 40960, "A100 80GB": 81920, "A800 80GB": 81920,
    "A10G 24GB": 23028, "A10 24GB": 23028, "A40 48GB": 46068, "L4 24GB": 23034,
    "L40 48GB": 46068, "L40S 48GB": 46068, "V100 16GB": 16384, "V100 32GB": 32768, "T4 16GB": 15360,
    "RTX A6000 48GB": 49140, "RTX 6000 Ada 48GB": 49140, "RTX PRO 6000 96GB": 97887,
    "RTX 3090 24GB": 24576, "RTX 4090 24GB": 24564, "RTX 5090 32GB": 32607,
    "MI250X 128GB": 131072, "MI300X 192GB": 196592, "MI325X 256GB": 262128,
}

# Bare names pick the common variant (a bare "A100" is the 80GB card, "H100" the SXM one).
_ALIASES: Mapping[str, str] = {
    "H100": "H100 80GB", "H100SXM": "H100 80GB", "H100NVL": "H100 NVL 94GB", "H100PCIE": "H100 PCIe 80GB",
    "H200": "H200 141GB", "H200NVL": "H200 NVL 141GB", "GH200": "GH200 96GB", "B200": "B200 180GB",
    "B300": "B300 288GB", "GB200": "GB200 186GB", "GB10": "DGX Spark GB10 128GB", "DGXSPARK": "DGX Spark GB10 128GB",
    "SPARK": "DGX Spark GB10 128GB", "A100": "A100 80GB", "A10G": "A10G 24GB", "A10": "A10 24GB", "L4": "L4 24GB",
    "L40": "L40 48GB", "L40S": "L40S 48GB", "A40": "A40 48GB", "V100": "V100 32GB", "T4": "T4 16GB",
    "A6000": "RTX A6000 48GB", "RTXA6000": "RTX A6000 48GB", "RTX6000ADA": "RTX 6000 Ada 48GB",
    "RTXPRO6000": "RTX PRO 6000 96GB", "RTXPRO6000BLACKWELL": "RTX PRO 6000 96GB",
    "RTX3090": "RTX 3090 24GB", "3090": "RTX 3090 24GB", "RTX4090": "RTX 4090 24GB", "4090": "RTX 4090 24GB",
    "RTX5090": "RTX 5090 32GB", "5090": "RTX 5090 32GB", "MI300X": "MI300X 192GB", "MI325X": "MI325X 256GB",
    "MI250X": "MI250X 128GB", "H800": "H800 80GB", "A800": "A800 80GB",
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(tib|tb|t|gib|gb|g|mib|mb|m)?\s*$", re.I)
_UNITS = {"tib": 2**40, "tb": 10**12, "t": 10**12, "gib": 2**30, "gb": 10**9, "g": 10**9,
          "mib": 2**20, "mb": 10**6, "m": 10**6}


def parse_memory_size(text: str) -> int:
    """'80GB' -> 80e9 bytes (decimal), '80GiB' -> 80 * 2**30; a bare number is GB, as cards are sold."""
    match = _SIZE.match(str(text))
    if not match:
        raise SeqprofError(f"cannot read memory size {text!r}", fix="write it like 80GB, 80GiB or 81559MiB")
    number, unit = match.groups()
    value = int(float(number) * _UNITS[(unit or "gb").lower()])
    if value <= 0:
        raise SeqprofError(f"memory size {text!r} is not positive", fix="write it like 80GB")
    return value


def _key(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", name.upper().replace("NVIDIA", "").replace("GEFORCE", ""))


def gpu_memory_bytes(name: str) -> tuple[str, int]:
    """A GPU name ('H100', 'h200', 'A100 40GB', 'RTX PRO 6000') -> (canonical name, total bytes)."""
    wanted = _key(name)
    table = {_key(k): k for k in GPU_MEMORY_MIB}
    table.update({_key(alias): target for alias, target in _ALIASES.items()})
    if wanted in table:
        label = table[wanted]
        return label, GPU_MEMORY_MIB[label] * _MIB
    # "A100-80G", "H100 80G": retry with a trailing B
    if wanted.endswith("G") and wanted + "B" in table:
        label = table[wanted + "B"]
        return label, GPU_MEMORY_MIB[label] * _MIB
    close = difflib.get_close_matches(name, list(GPU_MEMORY_MIB) + list(_ALIASES), n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise SeqprofError(f"unknown GPU {name!r}", fix=hint + "or give its size: --gpu-memory 80GB")


def gpu_names() -> list[str]:
    """The canonical names, for help text and error messages."""
    return list(GPU_MEMORY_MIB)
