"""GPU facts: the card the user named (--gpu) or its memory (--gpu-memory)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuFacts:
    name: str
    memory_bytes: int


def gpu_facts(name: str | None = None, memory: str | None = None) -> GpuFacts | None:
    """--gpu NAME (seqprof.predict.gpus table) or --gpu-memory SIZE; None when neither is given."""
    if memory is None and name is None:
        return None
    from seqprof.predict.gpus import gpu_memory_bytes, parse_memory_size

    if memory is not None:
        return GpuFacts(name=name or f"{memory} GPU", memory_bytes=parse_memory_size(memory))
    label, size = gpu_memory_bytes(name)
    return GpuFacts(name=label, memory_bytes=size)
