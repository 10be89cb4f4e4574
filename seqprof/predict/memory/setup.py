"""What one training step's memory depends on besides the architecture, and what the estimate returns.

The constants here were measured on an H200 (benchmarks/memory/); the option tables name what the model prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seqprof.errors import SeqprofError

GiB = 2**30
# Measured on the H200 (benchmarks/memory/measured_h200.json, `context_bytes`): what the driver holds for the
# process beyond PyTorch's allocator (CUDA context, cuBLAS/cuDNN handles, kernels loaded lazily).
CUDA_CONTEXT_BYTES = 804_061_184
# cuBLAS/cuBLASLt workspaces come from the caching allocator after the first matmul and stay (64 MiB measured:
# allocated_steady minus weights and optimizer states, every scenario).
CUBLAS_WORKSPACE_BYTES = 64 * 2**20
# The caching allocator reserves more than it hands out (block rounding, fragmentation across sizes).
ALLOCATOR_OVERHEAD_FRACTION = 0.03

# The components of a MemoryEstimate, in the order they are printed, with the words people read
# (`seqprof memory`, lint findings and the HTML report all label them from this one table).
COMPONENT_LABELS: Mapping[str, str] = {
    "weights": "weights", "reference_model": "reference model", "gradients": "gradients",
    "optimizer_states": "optimizer states", "optimizer_workspace": "optimizer step temporaries",
    "activations": "activations", "logits": "logits and loss buffers", "workspace": "cuBLAS workspace",
    "cuda_context": "CUDA context", "allocator_overhead": "allocator overhead"}
PRECISIONS = {"bf16": 2, "fp16": 2, "fp32": 4}
PAIRED_TRAINERS = ("dpo", "orpo", "ftpo", "simpo", "cpo", "ipo")  # chosen + rejected in every batch
REFERENCE_FREE = ("orpo", "simpo", "cpo")  # paired, but no reference model
UNPAIRED_PREFERENCE = ("kto",)  # one completion per row, labelled desirable or not; a reference model like DPO's
ATTENTION = ("sdpa", "flash_attention_2", "flash_attention_3", "eager", "flex_attention")
LOSSES = ("hf", "chunked", "liger", "cut_cross_entropy")
OPTIMIZERS = {  # config name -> the state layout optimizer_bytes() prices
    "adamw_torch": "adam_foreach", "adamw": "adam_foreach", "adam": "adam_foreach", "adamw_hf": "adam_foreach",
    "adamw_torch_fused": "adam_fused", "adamw_fused": "adam_fused", "adamw_apex_fused": "adam_fused",
    "adamw_8bit": "adam_8bit", "adamw_bnb_8bit": "adam_8bit", "bnb_adamw_8bit": "adam_8bit", "adam8bit": "adam_8bit",
    "paged_adamw_8bit": "paged_adam_8bit", "paged_adamw_32bit": "paged_adam_32bit", "paged_adamw": "paged_adam_32bit",
    "sgd": "sgd", "sgd_momentum": "sgd_momentum", "adafactor": "adafactor", "lion": "lion", "lion_8bit": "lion_8bit",
    "paged_lion_8bit": "lion_8bit",
}
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
_TARGET_ALIASES = {"all-linear": ALL_LINEAR, "all_linear": ALL_LINEAR, "all": ALL_LINEAR,
                   "attention": ("q_proj", "k_proj", "v_proj", "o_proj"), "mlp": ("gate_proj", "up_proj", "down_proj"),
                   "qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj"),
                   "c_attn": ("q_proj", "k_proj", "v_proj"), "c_proj": ("o_proj",), "w1": ("gate_proj",),
                   "w2": ("down_proj",), "w3": ("up_proj",), "wq": ("q_proj",), "wk": ("k_proj",), "wv": ("v_proj",),
                   "wo": ("o_proj",)}


@dataclass(frozen=True)
class TrainingSetup:
    """What the memory of a step depends on besides the architecture (one GPU's share of it)."""

    micro_batch_size: int = 1
    seq_len: int = 2048  # worst case: every sequence padded or packed to this length
    precision: str = "bf16"  # compute dtype: bf16 | fp16 | fp32
    master_weights_fp32: bool = False  # params kept in fp32, forward under autocast in `precision`
    adapter: str | None = None  # None: full fine-tune; "lora" (qlora = lora + load_in_4bit)
    lora_r: int = 16
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")  # peft's default for Llama/Qwen
    lora_dropout: float = 0.0
    lora_fp32: bool = True  # peft's autocast_adapter_dtype=True keeps adapters (and their inputs) in fp32
    # the Trainer's bf16/fp16 flag: accelerate runs the forward under torch.autocast, so an fp32 LoRA branch's
    # matmuls run (and keep their inputs) in the compute dtype; a plain training loop has no autocast
    trainer_autocast: bool = False
    # the step runs inside transformers' Trainer (or a subclass: TRL, axolotl, LLaMA-Factory): with a bitsandbytes
    # 8-bit optimizer, Trainer.create_optimizer keeps every nn.Embedding weight in 32-bit states
    hf_trainer: bool = False
    load_in_4bit: bool = False
    load_in_8bit: bool = False
    double_quant: bool = True
    kbit_upcast: bool = False  # 4/8-bit: peft's prepare_model_for_kbit_training upcast the unquantised params to fp32
    optimizer: str = "adamw_torch_fused"  # transformers' default with torch >= 2.8
    gradient_checkpointing: bool = False
    # torch.utils.checkpoint's use_reentrant: transformers 5 passes False, 4.x True, axolotl's SFT and LLaMA-Factory
    # True. It matters for 8-bit weights: bitsandbytes keeps each linear's input on the autograd context itself,
    # which the non-reentrant variant cannot drop (seqprof.predict.memory.activations.linear)
    checkpoint_reentrant: bool = False
    attn_implementation: str = "sdpa"
    loss: str = "hf"  # hf (logits materialised, fp32 upcast) | chunked | liger | cut_cross_entropy
    loss_chunk_size: int = 4096
    trainer: str = "sft"  # sft | dpo (chosen+rejected in one batch, reference forward) | ...
    reference: str = "model"  # dpo: "model" (a second copy), "lora_base" (adapters off), "precomputed", "none"
    zero_stage: int = 0
    fsdp: bool = False
    # DeepSpeed's zero_optimization.offload_optimizer / offload_param (device cpu or nvme); FSDP's cpu offload is
    # offload_params too (torchtune fsdp_cpu_offload, FSDP's CPUOffload(offload_params=True) moves grads and states)
    offload_optimizer: bool = False
    offload_params: bool = False
    world_size: int = 1
    gradient_accumulation_steps: int = 1
    token_budget: int | None = None  # tokens per micro batch (packed / token-budget batching) instead of b x s
    sdpa_kernel: str | None = None  # force flash | efficient | math (default: what torch picks on a CUDA GPU)
    # trainer "grpo" (TRL 1.16 GRPOConfig defaults; seq_len is prompt + completion, micro_batch_size counts
    # completions): seqprof.predict.memory.grpo walks generation, the log-prob passes and the training step
    num_generations: int = 8
    max_completion_length: int = 512
    steps_per_generation: int | None = None  # None: gradient_accumulation_steps, as GRPOConfig.__post_init__ sets it
    num_iterations: int = 1
    beta: float = 0.0  # KL coefficient: > 0 runs the reference log-probs (a copy, or LoRA's adapters off)
    # TRL >= 1.15's SFT, DPO and KTO trainers score through add_fused_lm_head, so no logits exist
    # (seqprof.predict.memory.trl_head); False: the logits are materialised (transformers' loss, TRL before 1.15,
    # axolotl's own trainer, LLaMA-Factory). GRPO always walks TRL 1.16's fused head.
    fused_lm_head: bool = False
    # rows padded to the longest of their batch carry an attention mask: sdpa then keeps an additive mask and the
    # repeated keys/values per layer (dynamic padding with more than one row; packing has no mask)
    padding_mask: bool = False
    # Unsloth's FastLanguageModel + get_peft_model (LoRA/QLoRA): its own layer kernels and fused loss, walked by
    # seqprof.predict.memory.unsloth; checkpoint_offload: use_gradient_checkpointing="unsloth" (inputs to host)
    unsloth: bool = False
    checkpoint_offload: bool = False

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise SeqprofError(f"unknown precision {self.precision!r}", fix="use bf16, fp16 or fp32")
        if self.micro_batch_size < 1 or self.seq_len < 1:
            raise SeqprofError("micro batch size and sequence length must be positive")
        if self.loss not in LOSSES:
            raise SeqprofError(f"unknown loss implementation {self.loss!r}", fix=f"use one of {', '.join(LOSSES)}")
        if self.optimizer.lower() not in OPTIMIZERS:
            raise SeqprofError(f"unknown optimizer {self.optimizer!r}",
                               fix=f"use one of {', '.join(sorted(OPTIMIZERS))}")
        if self.trainer == "grpo":
            from seqprof.predict.memory.grpo import check_grpo_setup
            check_grpo_setup(self)

    @property
    def sequences(self) -> int:
        """Sequences in one forward: paired preference trainers put chosen and rejected in the same batch."""
        n = self.micro_batch_size if self.token_budget is None else max(1, self.token_budget // self.seq_len)
        return 2 * n if self.is_paired else n

    @property
    def tokens(self) -> int:
        per = self.micro_batch_size * self.seq_len if self.token_budget is None else self.token_budget
        return 2 * per if self.is_paired else per

    @property
    def is_paired(self) -> bool:
        """Chosen and rejected in every batch (DPO and its reference-free cousins)."""
        return self.trainer in PAIRED_TRAINERS

    @property
    def is_preference(self) -> bool:
        """Sequence log-probs against a preference loss: the paired trainers and KTO."""
        return self.is_paired or self.trainer in UNPAIRED_PREFERENCE


@dataclass(frozen=True)
class MemoryEstimate:
    """Predicted peak of one step: components live at the peak (they sum to peak_bytes), and full sizes."""

    peak_bytes: int
    components: Mapping[str, int]
    notes: tuple[str, ...] = ()
    peak_phase: str = ""
    totals: Mapping[str, int] = field(default_factory=dict)
    stage_peaks: Mapping[str, int] = field(default_factory=dict)  # allocated peak per stage of the step

    @property
    def allocated_bytes(self) -> int:
        """The peak PyTorch's allocator reports (max_memory_allocated): no context, no allocator slack."""
        return self.peak_bytes - self.components.get("cuda_context", 0) - self.components.get("allocator_overhead", 0)

    def share(self, component: str) -> float:
        return self.components.get(component, 0) / self.peak_bytes if self.peak_bytes else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"peak_bytes": self.peak_bytes, "peak_gib": round(self.peak_bytes / GiB, 3),
                "allocated_bytes": self.allocated_bytes, "peak_phase": self.peak_phase,
                "components": dict(self.components), "totals": dict(self.totals), "notes": list(self.notes)}
