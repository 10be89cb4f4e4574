"""Memory facts: the predicted peak against the GPU, per component, and what each fix would save."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from seqprof.config.plan import Plan, Setting
from seqprof.lint.facts.common import GIB, KEY_NAMES, KeyNames
from seqprof.lint.facts.drafter import DrafterFacts, drafter_facts
from seqprof.lint.facts.gpu import GpuFacts

NEAR_GPU_LIMIT = 0.10  # "within 10% of the GPU's memory": the warning band under the limit
_FIXED_COMPONENTS = ("cuda_context", "allocator_overhead", "workspace")  # the same for every config
DRAFTER_NOTE = "drafter training: the peak estimate covers fine-tuning (SFT, DPO), not a frozen target + draft model"

# How each memory fix is switched on in a dialect's own keys; a missing entry: the framework has no switch.
MEMORY_FIXES: Mapping[str, Mapping[str, str]] = {
    "axolotl": {
        "checkpointing": "gradient_checkpointing: true", "lora": "adapter: lora",
        "qlora": "adapter: qlora with load_in_4bit: true",
        "sharding": "deepspeed: deepspeed_configs/zero3_bf16.json (or fsdp_config)",
        "fused_loss": "plugins: [axolotl.integrations.liger.LigerPlugin] with liger_fused_linear_cross_entropy: "
                      "true, or plugins: [axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin] with "
                      "cut_cross_entropy: true",
        "lora_reference": "adapter: lora (the reference is then the base model with the adapter switched off)",
        "precompute_reference": "precompute_ref_log_probs: true"},
    "trl": {
        "checkpointing": "gradient_checkpointing: true", "lora": "use_peft: true (lora_r, lora_target_modules)",
        "qlora": "use_peft: true with load_in_4bit: true",
        "sharding": "deepspeed: a ZeRO-3 JSON, or fsdp: full_shard auto_wrap",
        "fused_loss": "use_liger_kernel: true",
        "lora_reference": "use_peft: true (with ref_model=None the trainer uses the base model, adapter "
                          "disabled, as the reference)",
        "precompute_reference": "precompute_ref_log_probs: true"},
    "hf": {
        "checkpointing": "gradient_checkpointing: true",
        "sharding": "deepspeed: a ZeRO-3 JSON, or fsdp: full_shard auto_wrap",
        "fused_loss": "use_liger_kernel: true"},
    "unsloth": {
        "checkpointing": "use_gradient_checkpointing: unsloth", "lora": "full_finetuning: false",
        "qlora": "load_in_4bit: true"},
    "llamafactory": {
        "checkpointing": "disable_gradient_checkpointing: false", "lora": "finetuning_type: lora",
        "qlora": "finetuning_type: lora with quantization_bit: 4",
        "sharding": "deepspeed: examples/deepspeed/ds_z3_config.json", "fused_loss": "enable_liger_kernel: true",
        "lora_reference": "finetuning_type: lora (with no ref_model, the base model with the adapter disabled "
                          "is the reference)"},
    "llamafactory_v1": {
        "lora": "peft_config: {name: lora}", "qlora": "quant_config: {quantization_bit: 4}",
        "sharding": "dist_config: {name: fsdp2}", "fused_loss": "kernel_config: {name: liger_kernel}"},
    "torchtune": {
        "checkpointing": "enable_activation_checkpointing: true",
        "lora": "a lora_* model builder (model._component_: torchtune.models.<family>.lora_<size>)",
        "qlora": "a qlora_* model builder (model._component_: torchtune.models.<family>.qlora_<size>)",
        "sharding": "a *_distributed recipe (FSDP)",
        "fused_loss": "loss._component_: torchtune.modules.loss.LinearCrossEntropyLoss",
        "lora_reference": "the lora_dpo recipe (the reference is the base model with the adapter disabled)"},
    "auto_antislop": {
        "checkpointing": "finetune_gradient_checkpointing: unsloth", "qlora": "finetune_load_in_4bit: true"},
}


@dataclass(frozen=True)
class MemoryComponent:
    """One component of the predicted peak, as a rule's message names it."""

    name: str
    label: str
    bytes: int
    share: float  # of the predicted peak

    @property
    def gib(self) -> float:
        return self.bytes / GIB


@dataclass(frozen=True)
class MemoryFixes:
    """The memory fixes written in the dialect's own keys; None where the framework has no switch for one."""

    checkpointing: str | None = None
    lora: str | None = None
    qlora: str | None = None
    sharding: str | None = None
    fused_loss: str | None = None
    lora_reference: str | None = None
    precompute_reference: str | None = None


@dataclass(frozen=True)
class MemoryOption:
    """The same step re-estimated with one fix applied: what to write, and the peak it predicts."""

    fix: str
    peak_bytes: int
    fits: bool | None  # None without a GPU

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB


@dataclass(frozen=True)
class MemoryCheck:
    """The memory estimate as the rules read it (and the HTML report draws it: components, peak, notes)."""

    peak_bytes: int
    components: Mapping[str, int]
    peak_phase: str
    notes: tuple[str, ...]
    top: tuple[MemoryComponent, ...]  # the config's own components, largest first (no context/slack)
    logits: MemoryComponent
    reference: MemoryComponent
    gpu_name: str | None
    gpu_bytes: int | None
    micro_batch_size: int
    seq_len: int
    tokens: int  # tokens in one forward (chosen + rejected for preference training)
    vocab_size: int
    precision: str
    dtype_bytes: int
    full_finetune: bool
    quantized: bool
    gradient_checkpointing: bool
    fused_loss: bool
    sharded: bool
    world_size: int
    world_size_known: bool  # stated in the config or by --gpus (else the estimate assumes 1 GPU)
    trainer: str
    reference_mode: str  # model | lora_base | precomputed
    fix: MemoryFixes
    source: str  # where the architecture came from
    estimate: Any = field(default=None, repr=False, compare=False)  # seqprof.predict.memory_plan.MemoryFacts
    keys: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB

    @property
    def capacity_bytes(self) -> int | None:
        """The GPU's memory (the HTML report reads this name)."""
        return self.gpu_bytes

    @property
    def gpu_gib(self) -> float | None:
        return self.gpu_bytes / GIB if self.gpu_bytes else None

    @property
    def headroom(self) -> float | None:
        """Free share of the GPU at the predicted peak (negative: over)."""
        return 1 - self.peak_bytes / self.gpu_bytes if self.gpu_bytes else None

    @property
    def over_gpu(self) -> bool:
        return bool(self.gpu_bytes) and self.peak_bytes > self.gpu_bytes

    @property
    def near_gpu(self) -> bool:
        """Fits, but within NEAR_GPU_LIMIT of the GPU's memory."""
        return bool(self.gpu_bytes) and not self.over_gpu and self.headroom < NEAR_GPU_LIMIT

    @property
    def over_gib(self) -> float:
        return (self.peak_bytes - self.gpu_bytes) / GIB if self.gpu_bytes else 0.0

    @property
    def logits_tensor_bytes(self) -> int:
        """One copy of the logits: tokens x vocabulary x the compute dtype's bytes (b·s·V·bytes)."""
        return self.tokens * self.vocab_size * self.dtype_bytes

    @property
    def logits_tensor_gib(self) -> float:
        return self.logits_tensor_bytes / GIB

    @property
    def largest_other(self) -> MemoryComponent | None:
        """The largest component that is not the logits."""
        return next((c for c in self.top if c.name != "logits"), None)

    @property
    def logits_dominate(self) -> bool:
        return bool(self.top) and self.top[0].name == "logits"

    @property
    def needs_reference_copy(self) -> bool:
        """Preference training that keeps a second full copy of the weights as its reference model."""
        from seqprof.predict.memory import REFERENCE_FREE

        return self.reference.bytes > 0 and self.trainer not in REFERENCE_FREE

    @cached_property
    def options(self) -> tuple[MemoryOption, ...]:
        """The fixes that lower the peak, each re-estimated (computed only when a message reads them)."""
        return _memory_options(self, ("micro_batch", "checkpointing", "lora", "qlora", "sharding"))

    @cached_property
    def loss_options(self) -> tuple[MemoryOption, ...]:
        return _memory_options(self, ("fused_loss",))

    @cached_property
    def reference_options(self) -> tuple[MemoryOption, ...]:
        return _memory_options(self, ("lora_reference", "precompute_reference"))


@dataclass(frozen=True)
class MemoryInputs:
    """What build_facts needs from the memory stage: the estimate, the drafter check, and why either is missing."""

    check: MemoryCheck | None = None
    drafter: DrafterFacts | None = None
    architecture: Any = None
    reason: str | None = None


def memory_inputs(plan: Plan, *, memory: Any = None, model_config: str | None = None,
                  gpu: GpuFacts | None = None, world_size: int | None = None) -> MemoryInputs:
    """The memory facts of one plan: seqprof.predict.memory's estimate for fine-tuning, the logits check for drafters.

    `memory` is a seqprof.predict.memory_plan.MemoryFacts already computed; `model_config` (--model-config) wins over the
    plan's model found locally. A config.json that is missing locally skips the memory rules, never a guess;
    an explicit --model-config that cannot be read is an error."""
    from seqprof.errors import SeqprofError
    from seqprof.predict.architecture import read_architecture

    drafter = str(plan.get("trainer") or "").lower() == "drafter"
    if model_config:
        read_architecture(model_config)  # the user named it: a bad file is an input error (exit 2)
    if drafter:  # the target's architecture sizes the logits; the fine-tuning estimate does not apply
        path, why = locate_model_config(plan, model_config, drafter=True)
        if path is None:
            return MemoryInputs(reason=why)
        try:
            arch = read_architecture(path)
        except SeqprofError as exc:
            return MemoryInputs(reason=str(exc))
        return MemoryInputs(drafter=drafter_facts(plan, arch, gpu), architecture=arch, reason=DRAFTER_NOTE)
    if memory is None:
        path, why = locate_model_config(plan, model_config)
        if path is None:
            return MemoryInputs(reason=why)
        from seqprof.predict.memory_plan import memory_facts

        try:
            memory = memory_facts(_with_world_size(plan, world_size), model_config=path,
                                  gpu_name=gpu.name if gpu else None, gpu_bytes=gpu.memory_bytes if gpu else None)
        except (TypeError, ValueError) as exc:  # a value the estimate cannot read: skip the rules, never crash lint
            return MemoryInputs(reason=f"the memory estimate could not read this config ({exc})")
    if not memory.available:
        return MemoryInputs(architecture=memory.architecture, reason=memory.note.removeprefix("skipped: "))
    return MemoryInputs(check=memory_check(plan, memory), architecture=memory.architecture)


def locate_model_config(plan: Plan, model_config: str | None = None,
                        drafter: bool = False) -> tuple[str | None, str]:
    """The config.json to read: --model-config, else the plan's model config / model found locally.

    A drafter plan's model_config_path is the draft model's JSON; its logits are sized by the target (model)."""
    from seqprof.predict.architecture import find_model_config

    if model_config:
        return model_config, ""
    names = [plan.get("model")] if drafter else [plan.get("model_config_path"), plan.get("model")]
    for name in names:
        if not isinstance(name, str) or not name.strip():
            continue
        found = find_model_config(name)
        if found is None and not name.startswith(("/", "~")):  # relative to the config file's folder
            found = find_model_config(str(Path(plan.path).resolve().parent / name))
        if found is not None:
            return str(found), ""
    model = plan.get("model")
    if not isinstance(model, str) or not model.strip():
        return None, "the config names no model; pass --model-config PATH/config.json"
    return None, f"no model config.json found locally for {model}; pass --model-config"


def _with_world_size(plan: Plan, world_size: int | None) -> Plan:
    """--gpus overrides the plan's world size for the estimate (it decides ZeRO/FSDP sharding)."""
    if world_size is None:
        return plan
    settings = dict(plan.settings)
    settings["world_size"] = Setting(world_size, None, None, None, "--gpus")
    return replace(plan, settings=settings)


def _world_size_known(plan: Plan) -> bool:
    s = plan.settings.get("world_size")
    return s is not None and (s.stated or s.source == "--gpus")


def _component(name: str, nbytes: int, peak: int) -> MemoryComponent:
    from seqprof.predict.memory import COMPONENT_LABELS

    return MemoryComponent(name=name, label=COMPONENT_LABELS.get(name, name.replace("_", " ")), bytes=int(nbytes),
                           share=nbytes / peak if peak else 0.0)


def memory_check(plan: Plan, mf: Any) -> MemoryCheck:
    """seqprof.predict.memory_plan.MemoryFacts (available) -> the facts the memory rules read, in the plan's own keys."""
    from seqprof.predict.memory import PRECISIONS

    est, setup, arch = mf.estimate, mf.setup, mf.architecture
    peak = est.peak_bytes
    comps = dict(est.components)
    own = sorted((_component(k, v, peak) for k, v in comps.items() if v > 0 and k not in _FIXED_COMPONENTS),
                 key=lambda c: -c.bytes)
    names = {name: table.get(plan.dialect, name) for name, table in KEY_NAMES.items()}
    names.update({name: s.key for name, s in plan.settings.items() if s.key})
    return MemoryCheck(
        peak_bytes=peak, components=comps, peak_phase=est.peak_phase, notes=(*mf.assumptions, *est.notes),
        top=tuple(own), logits=_component("logits", comps.get("logits", 0), peak),
        reference=_component("reference_model", comps.get("reference_model", 0), peak),
        gpu_name=mf.gpu_name, gpu_bytes=mf.gpu_bytes, micro_batch_size=setup.micro_batch_size,
        seq_len=setup.seq_len, tokens=setup.tokens, vocab_size=arch.vocab_size, precision=setup.precision,
        dtype_bytes=PRECISIONS[setup.precision], full_finetune=setup.adapter is None,
        quantized=setup.load_in_4bit or setup.load_in_8bit, gradient_checkpointing=setup.gradient_checkpointing,
        fused_loss=setup.loss != "hf", sharded=bool(setup.zero_stage or setup.fsdp), world_size=setup.world_size,
        world_size_known=_world_size_known(plan), trainer=setup.trainer, reference_mode=setup.reference,
        fix=MemoryFixes(**MEMORY_FIXES.get(plan.dialect, {})), source=mf.note, estimate=mf,
        keys=KeyNames(names))


def _memory_options(check: MemoryCheck, kinds: tuple[str, ...]) -> tuple[MemoryOption, ...]:
    """Re-estimate the step with each applicable fix (seqprof.predict.memory.estimate_memory on a changed setup)."""
    from seqprof.predict.memory import ALL_LINEAR, estimate_memory

    mf = check.estimate
    setup, arch = mf.setup, mf.architecture
    fix, keys = check.fix, check.keys
    lora = {"adapter": "lora", "lora_targets": ALL_LINEAR, "lora_r": setup.lora_r, "master_weights_fp32": False}
    candidates: list[tuple[str, Any]] = []
    for kind in kinds:
        if kind == "micro_batch" and setup.micro_batch_size > 1:
            text = (f"{keys['micro_batch_size']}: 1 (multiply {keys['gradient_accumulation_steps']} "
                    f"by {setup.micro_batch_size} to keep the effective batch)")
            candidates.append((text, replace(setup, micro_batch_size=1)))
        elif kind == "checkpointing" and not setup.gradient_checkpointing and fix.checkpointing:
            candidates.append((fix.checkpointing, replace(setup, gradient_checkpointing=True)))
        elif kind == "lora" and setup.adapter is None and fix.lora:
            candidates.append((f"{fix.lora}, r={setup.lora_r} on all linear layers", replace(setup, **lora)))
        elif kind == "qlora" and not (setup.load_in_4bit or setup.load_in_8bit) and fix.qlora:
            targets = setup.lora_targets if setup.adapter else ALL_LINEAR
            candidates.append((fix.qlora, replace(setup, **{**lora, "lora_targets": targets}, load_in_4bit=True)))
        elif kind == "sharding" and setup.world_size > 1 and not (setup.zero_stage or setup.fsdp) and fix.sharding:
            candidates.append((f"{fix.sharding} over {setup.world_size} GPUs", replace(setup, zero_stage=3)))
        elif kind == "fused_loss" and setup.loss == "hf" and fix.fused_loss:
            candidates.append((fix.fused_loss, replace(setup, loss="liger")))
        elif kind == "lora_reference" and setup.adapter is None and fix.lora_reference:
            candidates.append((fix.lora_reference, replace(setup, **lora, reference="lora_base")))
        elif kind == "precompute_reference" and setup.reference == "model" and fix.precompute_reference:
            candidates.append((fix.precompute_reference, replace(setup, reference="precomputed")))
    if check.gpu_bytes and len(candidates) > 1:  # none alone may fit: then all of them together
        together = setup
        for field_name in ("micro_batch_size", "gradient_checkpointing", "adapter", "lora_targets", "lora_r",
                           "master_weights_fp32", "load_in_4bit", "zero_stage", "loss", "reference"):
            for _, changed in candidates:
                if getattr(changed, field_name) != getattr(setup, field_name):
                    together = replace(together, **{field_name: getattr(changed, field_name)})
        candidates.append(("all of these together", together))
    options = []
    for text, changed in candidates:
        peak = estimate_memory(arch, changed).peak_bytes
        options.append(MemoryOption(fix=text, peak_bytes=peak,
                                    fits=peak <= check.gpu_bytes if check.gpu_bytes else None))
    if len(options) > 1 and options[-1].fix == "all of these together" and any(o.fits for o in options[:-1]):
        options.pop()  # one change alone is enough
    return tuple(options)
