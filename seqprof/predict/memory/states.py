"""Model states: the weights as loaded (quantised or not, LoRA adapters) and the optimizer's states and temporaries."""

from __future__ import annotations

from seqprof.predict.architecture import Architecture
from seqprof.predict.memory.activations import StepContext, lora_targetable
from seqprof.predict.memory.moe import expert_lora
from seqprof.predict.memory.setup import OPTIMIZERS, TrainingSetup


def weight_bytes(arch: Architecture, cx: StepContext) -> dict[str, int]:
    """Bytes of the weights as loaded (quantised linears, embeddings, norms, LoRA adapters)."""
    s = cx.s
    pc = cx.pc
    # bitsandbytes quantises nn.Linear modules only: fused MoE experts and routers stay in the model dtype
    layers = [(layer, lora_targetable(arch, layer)) for layer in arch.layers()]
    lin_params = sum(lin.d_in * lin.d_out * lin.count for _, quantised in layers for lin in quantised)
    bias_params = sum(lin.d_out * lin.count for _, quantised in layers for lin in quantised if lin.bias)
    other = arch.param_count() - lin_params - bias_params
    if s.load_in_4bit:
        consts = (1 / 64 + 4 / (64 * 256)) if s.double_quant else 4 / 64
        lin_bytes = lin_params * (0.5 + consts)
    elif s.load_in_8bit:
        lin_bytes = lin_params + sum(4 * lin.d_out * lin.count for _, quantised in layers for lin in quantised)
    else:
        lin_bytes = lin_params * pc
    lora = 0
    if s.adapter and not cx.full:
        lora = sum(sum(s.lora_r * (lin.d_in + lin.d_out) * lin.count for lin in quantised if lin.name in cx.targets)
                   + (expert_lora(cx)[0] if layer.is_moe else 0) for layer, quantised in layers)
    other_bytes = cx.c if (s.load_in_4bit or s.load_in_8bit) else pc  # embeddings, norms, biases stay unquantised
    return {"base": int(lin_bytes + (bias_params + other) * other_bytes), "lora_params": lora, "lora": lora * cx.lb}


def optimizer_bytes(setup: TrainingSetup, trainable: int, trainable_bytes: int,
                    embedding_params: int = 0) -> tuple[int, int, str]:
    """(state bytes, step workspace bytes, description) for the trainable parameters; *embedding_params* of them
    are trainable nn.Embedding weights, which transformers' Trainer gives 32-bit states under a bitsandbytes 8-bit
    optimizer (trainer.py create_optimizer: GlobalOptimManager.register_module_override(..., {"optim_bits": 32}))."""
    kind = OPTIMIZERS[setup.optimizer.lower()]
    if kind == "adam_foreach":
        return 2 * trainable_bytes, trainable_bytes, "AdamW (foreach): exp_avg, exp_avg_sq in the param dtype; " \
                                                     "the step allocates sqrt(exp_avg_sq) for all params at once"
    if kind == "adam_fused":
        return 2 * trainable_bytes, 0, "AdamW (fused): two states in the param dtype, no step temporaries"
    if kind in ("adam_8bit", "paged_adam_8bit"):
        paged = "; paged: can spill to host" if "paged" in kind else ""
        exempt = embedding_params if setup.hf_trainer else 0
        kept = f"; the Trainer keeps {exempt:,} embedding weights in fp32 states" if exempt else ""
        return int((trainable - exempt) * (2 + 2 * 4 / 256) + 8 * exempt), 0, \
            f"8-bit AdamW (bitsandbytes): 1 byte per state + absmax{kept}{paged}"
    if kind == "paged_adam_32bit":
        return 8 * trainable, 0, "paged AdamW 32-bit: fp32 states in unified memory (can spill to host)"
    if kind == "sgd":
        return 0, 0, "SGD without momentum: no states"
    if kind == "sgd_momentum":
        return trainable_bytes, 0, "SGD with momentum: one state"
    if kind == "lion":
        return trainable_bytes, 0, "Lion: one momentum state"
    if kind == "lion_8bit":
        exempt = embedding_params if setup.hf_trainer else 0
        return int((trainable - exempt) * (1 + 4 / 256) + 4 * exempt), 0, "8-bit Lion: one 8-bit state"
    return int(trainable_bytes * 0.05), 0, "Adafactor: factored second moments (rows + columns)"
