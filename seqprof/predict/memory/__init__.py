"""Peak GPU memory of one training step (estimate.py walks it)."""

from seqprof.predict.memory.estimate import (
    ALL_LINEAR, ALLOCATOR_OVERHEAD_FRACTION, ATTENTION, COMPONENT_LABELS, CUBLAS_WORKSPACE_BYTES, CUDA_CONTEXT_BYTES,
    LOSSES, OPTIMIZERS, PAIRED_TRAINERS, PRECISIONS, REFERENCE_FREE, GiB, MemoryEstimate, TrainingSetup,
    attention_backend, estimate_memory,
)

__all__ = ["ALL_LINEAR", "ALLOCATOR_OVERHEAD_FRACTION", "ATTENTION", "COMPONENT_LABELS", "CUBLAS_WORKSPACE_BYTES",
           "CUDA_CONTEXT_BYTES", "GiB", "LOSSES", "OPTIMIZERS", "PAIRED_TRAINERS", "PRECISIONS", "REFERENCE_FREE",
           "MemoryEstimate", "TrainingSetup", "attention_backend", "estimate_memory"]
