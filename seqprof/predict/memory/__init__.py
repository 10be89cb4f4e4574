"""Peak GPU memory of one training step, one module per model: setup (inputs and constants), allocator (the
walk's bookkeeping), states (weights, optimizer), activations (decoder layers), logits (lm_head and loss),
estimate (the step, walked in order)."""

from seqprof.predict.memory.activations import attention_backend
from seqprof.predict.memory.estimate import estimate_memory
from seqprof.predict.memory.setup import (
    ALL_LINEAR,
    ALLOCATOR_OVERHEAD_FRACTION,
    ATTENTION,
    COMPONENT_LABELS,
    CUBLAS_WORKSPACE_BYTES,
    CUDA_CONTEXT_BYTES,
    LOSSES,
    OPTIMIZERS,
    PAIRED_TRAINERS,
    PRECISIONS,
    REFERENCE_FREE,
    GiB,
    MemoryEstimate,
    TrainingSetup,
)

__all__ = ["ALL_LINEAR", "ALLOCATOR_OVERHEAD_FRACTION", "ATTENTION", "COMPONENT_LABELS", "CUBLAS_WORKSPACE_BYTES",
           "CUDA_CONTEXT_BYTES", "GiB", "LOSSES", "OPTIMIZERS", "PAIRED_TRAINERS", "PRECISIONS", "REFERENCE_FREE",
           "MemoryEstimate", "TrainingSetup", "attention_backend", "estimate_memory"]
