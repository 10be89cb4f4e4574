"""From a normalised Plan to a memory estimate: what the config says, what was assumed, and the facts lint reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seqprof.config.dialects.common import as_bool
from seqprof.errors import SeqprofError
from seqprof.predict.architecture import Architecture
from seqprof.predict.memory import (
    ATTENTION,
    OPTIMIZERS,
    PRECISIONS,
    REFERENCE_FREE,
    MemoryEstimate,
    TrainingSetup,
    estimate_memory,
)

NO_CONFIG_FIX = "pass --model-config PATH/config.json"


def _on(value: Any) -> bool:
    """A plan switch (already normalised by the dialect's as_bool); raw config values go through it too."""
    return as_bool(value) is True


def _checkpointing(value: Any) -> bool:
    """gradient_checkpointing: true, or Unsloth's "unsloth" mode (checkpointed, activations offloaded)."""
    return _on(value) or (isinstance(value, str) and value.strip().lower() == "unsloth")


def _offloaded(value: Any) -> bool:
    """An offload target as DeepSpeed (device 'cpu' / 'nvme') or torchtune (a bool) states it."""
    return value is True or (isinstance(value, str) and value.strip().lower() in ("cpu", "nvme"))


def _pinned_releases(plan: Any, package: str) -> tuple[list[str] | None, str | None, str | None]:
    """(the releases of *package* the config's pins allow, the pin, its file:line), the pins placed among releases
    as lint placed them when it judged the keys (plan framework_versions, KeyHistory.allowed); None when unpinned."""
    from seqprof.config.key_history import KeyHistory
    from seqprof.config.pins import Pin, Pins

    info = (plan.get("framework_versions") or {}).get(package) or {}
    spec, source = info.get("pinned"), info.get("source")
    if not spec:
        return None, None, source
    return KeyHistory.load().allowed(package, Pins({package: (Pin(package, spec, source or ""),)})), spec, source


def _checkpoint_reentrant(plan: Any, raw: Mapping, trainer: str) -> tuple[bool, str]:
    """torch.utils.checkpoint's use_reentrant as the framework passes it, and where that came from.

    A stated gradient_checkpointing_kwargs.use_reentrant wins. axolotl sets True for SFT unless unfrozen_parameters
    is set (utils/config/__init__.py), and its RL builders False; LLaMA-Factory's use_reentrant_gc defaults to True;
    transformers' gradient_checkpointing_enable passes True in 4.x and False from 5.0 (placed by the pins); torchtune
    wraps layers with the non-reentrant checkpoint."""
    kwargs = raw.get("gradient_checkpointing_kwargs")
    if isinstance(kwargs, Mapping) and "use_reentrant" in kwargs:
        return _on(kwargs["use_reentrant"]), "gradient_checkpointing_kwargs.use_reentrant"
    if plan.dialect == "axolotl":
        return trainer == "sft" and not raw.get("unfrozen_parameters"), "axolotl's default"
    if plan.dialect == "llamafactory":
        stated = raw.get("use_reentrant_gc")
        return (True if stated is None else _on(stated)), "LLaMA-Factory's use_reentrant_gc"
    if plan.dialect in ("hf", "trl", "unsloth"):
        allowed, spec, source = _pinned_releases(plan, "transformers")
        if allowed and int(allowed[-1].split(".")[0]) < 5:
            return True, f"transformers {spec} ({source}): 4.x checkpoints reentrantly"
        return False, "transformers 5's non-reentrant checkpoint"
    return False, f"{plan.dialect}'s non-reentrant checkpoint"


TRAINER_DIALECTS = frozenset({"hf", "trl", "axolotl", "llamafactory", "unsloth"})
ONLINE_RL = frozenset({"grpo", "ppo", "rloo", "online_dpo"})  # a generation phase inside every step


def setup_from_plan(plan: Any, prompt_length: int | None = None) -> tuple[TrainingSetup, tuple[str, ...]]:
    """A normalised Plan (seqprof.config.plan) -> (TrainingSetup, notes on what was assumed).

    *prompt_length*: the longest prompt's tokens (`seqprof memory --prompt-length`), for GRPO, whose prompts TRL 1.x
    pads to the longest of each generation batch rather than to a configured length."""
    notes: list[str] = []
    get = plan.get
    trainer = str(get("trainer") or "sft").lower()
    raw = plan.raw if isinstance(plan.raw, Mapping) else {}
    if trainer in ONLINE_RL and not (trainer == "grpo" and plan.dialect == "trl"):
        raise SeqprofError(f"{trainer.upper()} as {plan.dialect} runs it is not modelled (seqprof walks TRL's "
                           "GRPOTrainer; generation, reward and value models of other recipes differ)", path=plan.path,
                           fix="estimate the SFT step of the same model and batch for the training part, and add the "
                               "recipe's generation KV cache yourself")
    grpo = _grpo_fields(raw) if trainer == "grpo" else {}
    seq = get("max_seq_length") if trainer != "grpo" else None
    stated = plan.setting("max_prompt_length") if hasattr(plan, "setting") else None
    if trainer == "grpo" and stated is not None and stated.source != "config":
        stated = None  # a dialect's default (DPO's old 512) is no GRPO prompt length: TRL 1.x has none
    prompt = prompt_length or (stated.value if trainer == "grpo" and stated else None) or \
        (get("max_prompt_length") if trainer != "grpo" else None)
    completion = grpo.get("max_completion_length") or get("max_completion_length")
    if seq is None and prompt and completion:
        seq = int(prompt) + int(completion)
    if seq is None and trainer == "grpo":
        raise SeqprofError("GRPO: the config gives no prompt length (TRL 1.x pads every prompt to the longest one "
                           "of its generation batch)", path=plan.path,
                           fix="pass the longest prompt's token count: seqprof memory CONFIG --prompt-length N "
                               "(`seqprof analyze` on the prompts reports it)")
    if seq is None:
        raise SeqprofError("the config sets no maximum sequence length", path=plan.path,
                           fix="set max_seq_length / max_length / sequence_len, the worst case the memory model needs")
    precision = str(get("precision") or "").lower() or None
    if precision not in PRECISIONS:
        notes.append("precision not stated: assumed bf16 weights and compute")
        precision = "bf16"
    init = raw.get("model_init_kwargs") if isinstance(raw.get("model_init_kwargs"), Mapping) else {}
    dtype = str(raw.get("torch_dtype") or raw.get("dtype") or init.get("torch_dtype") or init.get("dtype") or "")
    master_fp32 = precision != "fp32" and dtype.lower() in ("float32", "fp32", "torch.float32")
    if precision != "fp32" and not master_fp32:
        notes.append(f"weights assumed loaded in {precision} (transformers 5's dtype='auto'); "
                     "fp32 weights under autocast need about twice the weight, gradient and optimizer memory")
    adapter = get("adapter")
    adapter = str(adapter).lower() if adapter else None
    load4 = _on(get("load_in_4bit")) or adapter == "qlora"
    if load4 and _on(get("lora_load_in_4bit_ignored")):  # axolotl quantizes only for qlora (SP452)
        notes.append("load_in_4bit with adapter: lora: axolotl loads the base model unquantized, as predicted here")
        load4 = False
    load8 = _on(get("load_in_8bit"))
    if adapter in ("qlora",):
        adapter = "lora"
    if adapter in ("none", "full", ""):
        adapter = None
    targets = get("lora_targets")
    if isinstance(targets, str):
        targets = [targets]
    if adapter and not targets:
        notes.append("LoRA targets not stated: peft's default (q_proj, v_proj)")
        targets = ["q_proj", "v_proj"]
    optimizer = str(get("optimizer") or "adamw_torch_fused").lower()
    if optimizer not in OPTIMIZERS:
        notes.append(f"optimizer {optimizer!r} not modelled: counted as AdamW (two states)")
        optimizer = "adamw_torch_fused"
    attn = str(get("attn_implementation") or "sdpa")
    if attn not in ATTENTION:
        notes.append(f"attention {attn!r}: modelled as sdpa")
        attn = "sdpa"
    fused = get("fused_loss")
    loss = {"liger": "liger", "chunked": "chunked", "cut_cross_entropy": "cut_cross_entropy",
            "cce": "cut_cross_entropy"}.get(str(fused).lower(), "hf") if fused else "hf"
    reference = "none" if trainer in REFERENCE_FREE else ("lora_base" if adapter else "model")
    if _on(raw.get("precompute_ref_log_probs")):
        reference = "precomputed"
    elif raw.get("ref_model") or raw.get("ref_model_name_or_path"):
        reference = "model"
    zero = get("zero_stage")
    # axolotl runs peft's prepare_model_for_kbit_training on a 4/8-bit model (every unquantised parameter upcast
    # to fp32); TRL >= 1.0's trainers call get_peft_model alone (trl/trainer/sft_trainer.py), so no upcast there.
    kbit_upcast = (load4 or load8) and plan.dialect == "axolotl"
    # HF Trainer-based frameworks hand bf16/fp16 to accelerate, which runs the forward under torch.autocast (an fp32
    # LoRA branch then computes in bf16); torchtune and LLaMA-Factory v1 run their own loops without it
    trainer_autocast = plan.dialect in TRAINER_DIALECTS and precision in ("bf16", "fp16")
    fused, why = _fused_lm_head(plan, trainer)
    if why:
        notes.append(why)
    # dynamic padding: rows padded to the longest of their batch (or to max length) carry an attention mask that
    # transformers hands to sdpa; one unpadded row (b = 1, padding to the longest) gets none (masking_utils skips
    # an all-ones mask), and torchtune's own attention never takes one
    padding = str(get("padding") or "")
    micro = int(get("micro_batch_size") or 1)
    padding_mask = plan.dialect in TRAINER_DIALECTS and trainer != "grpo" and (
        padding == "max_length" or (padding == "longest" and micro > 1))
    if kbit_upcast:
        notes.append(f"{'8' if load8 and not load4 else '4'}-bit base prepared as axolotl does (peft's "
                     "prepare_model_for_kbit_training): embeddings, norms and lm_head upcast to fp32, activations in "
                     "fp32" + ("; under the Trainer's autocast sdpa and the lm_head's matmul run in bf16"
                               if trainer_autocast else ""))
    gc = _checkpointing(get("gradient_checkpointing"))
    reentrant, reentrant_why = _checkpoint_reentrant(plan, raw, trainer) if gc else (False, "")
    # Unsloth's own path for its adapters (a full fine-tune upcasts norms and runs transformers' layers: not walked).
    # LLaMA-Factory's use_unsloth loads through FastLanguageModel and always passes use_gradient_checkpointing=
    # "unsloth" to get_peft_model (model/model_utils/unsloth.py, 0.9.4)
    lf_unsloth = plan.dialect == "llamafactory" and _on(raw.get("use_unsloth"))
    unsloth = (plan.dialect == "unsloth" or lf_unsloth) and bool(adapter)
    offload = unsloth and (lf_unsloth or (isinstance(get("gradient_checkpointing"), str) and
                                          str(get("gradient_checkpointing")).strip().lower() == "unsloth"))
    if lf_unsloth and unsloth:
        gc = True
    if gc and load8 and not load4:
        notes.append(f"8-bit weights under a {'' if reentrant else 'non-'}reentrant checkpoint (use_reentrant="
                     f"{reentrant}: {reentrant_why}): " + (
                         "each layer's 8-bit inputs live only while it is recomputed" if reentrant else
                         "bitsandbytes keeps every linear's input on its autograd context until backward ends"))
    world_size = int(get("world_size") or 0) or None
    if trainer == "grpo":
        from seqprof.predict.memory.grpo import gpus_for_generation_batch

        steps = grpo.get("steps_per_generation") or int(get("gradient_accumulation_steps") or 1)
        world_size, why = gpus_for_generation_batch(int(get("micro_batch_size") or 1) * steps,
                                                    grpo.get("num_generations", TrainingSetup.num_generations),
                                                    world_size)
        if why:
            notes.append(why)
    setup = TrainingSetup(
        micro_batch_size=int(get("micro_batch_size") or 1), seq_len=int(seq), precision=precision,
        master_weights_fp32=master_fp32,
        adapter=adapter, lora_r=int(get("lora_r") or 16), lora_targets=tuple(str(t) for t in (targets or ())),
        lora_dropout=float(get("lora_dropout") or 0.0), load_in_4bit=load4, load_in_8bit=load8 and not load4,
        kbit_upcast=kbit_upcast, trainer_autocast=trainer_autocast, hf_trainer=plan.dialect in TRAINER_DIALECTS,
        fused_lm_head=fused, padding_mask=padding_mask, unsloth=unsloth, checkpoint_offload=offload,
        optimizer=optimizer, gradient_checkpointing=gc, checkpoint_reentrant=reentrant,
        attn_implementation=attn, loss=loss, trainer=trainer,
        reference=reference, zero_stage=int(zero) if zero not in (None, "") else 0, fsdp=bool(get("fsdp")),
        offload_optimizer=_offloaded(get("offload_optimizer")), offload_params=_offloaded(get("offload_params")),
        world_size=world_size or 1,
        gradient_accumulation_steps=int(get("gradient_accumulation_steps") or 1),
        token_budget=int(get("token_budget")) if get("token_budget") else None, **grpo)
    if setup.is_paired:
        notes.append(f"{trainer}: chosen and rejected sequences each at {seq} tokens; reference model: {reference}")
    elif setup.is_preference:
        notes.append(f"{trainer}: prompt + completion at {seq} tokens, KL rows as long; reference model: {reference}")
    if plan.dialect == "unsloth" and not unsloth:
        notes.append("Unsloth full fine-tuning is not walked on its own path (fp32 norms, transformers' layers): "
                     "counted as transformers' path")
    return setup, tuple(notes)


def _fused_lm_head(plan: Any, trainer: str) -> tuple[bool, str | None]:
    """Whether the step scores through TRL's fused lm_head (no logits), and a note on the trl release assumed.

    TRL configs run under the newest trl release their pins allow (pip's pick), else the newest seqprof knows.
    axolotl's SFT runs its own Trainer subclass (transformers' loss on materialised logits) and its DPO/KTO/ORPO run
    TRL's trainers under the trl axolotl pins, older than the fused head (axolotl 0.19.0 requires trl==1.9.0);
    LLaMA-Factory's trainers materialise the logits (CustomDPOTrainer.concatenated_forward)."""
    from seqprof.config.key_history import KeyHistory
    from seqprof.predict.memory.trl_head import FUSED_FROM, FUSED_TRAINERS

    if plan.dialect != "trl" or trainer not in FUSED_TRAINERS:
        return False, None
    from packaging.version import Version

    allowed, spec, source = _pinned_releases(plan, "trl")
    release = allowed[-1] if allowed else KeyHistory.load().newest("trl")
    if allowed:
        why = f"trl {spec} ({source})" + ("" if spec.startswith("==") else f": newest allowed {release}")
    elif spec:
        why = f"trl {spec} ({source}) matches no release seqprof knows: trl {release} assumed"
    else:
        why = f"no trl pin found: trl {release} assumed"
    if Version(release) >= Version(FUSED_FROM):
        return True, f"{why}, whose {trainer.upper()} trainer scores through its fused lm_head (no logits)"
    return False, f"{why}, before the fused lm_head ({FUSED_FROM}): the logits are materialised"


# GRPOConfig's fields the GRPO walk reads (seqprof.predict.memory.grpo), with their trl 1.16 defaults left to
# TrainingSetup's
_GRPO_KEYS = {"num_generations": int, "max_completion_length": int, "steps_per_generation": int,
              "num_iterations": int, "beta": float}


def _grpo_fields(raw: Mapping) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, kind in _GRPO_KEYS.items():
        value = raw.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = kind(value)
    return out


@dataclass(frozen=True)
class MemoryFacts:
    """What the lint rules read about memory (facts.memory); `available` False with a note when skipped."""

    available: bool
    note: str
    estimate: MemoryEstimate | None = None
    setup: TrainingSetup | None = None
    architecture: Architecture | None = None
    gpu_name: str | None = None
    gpu_bytes: int | None = None
    peak_bytes: int = 0
    assumptions: tuple[str, ...] = ()
    problem: SeqprofError | None = field(default=None, compare=False, repr=False)  # why not available, with a fix

    @property
    def over_budget(self) -> bool:
        return bool(self.available and self.gpu_bytes and self.peak_bytes > self.gpu_bytes)

    @property
    def headroom(self) -> float | None:
        """Free fraction of the GPU at the predicted peak (negative: over)."""
        if not (self.available and self.gpu_bytes):
            return None
        return 1 - self.peak_bytes / self.gpu_bytes


def memory_facts(plan: Any, *, model_config: str | None = None, gpu_name: str | None = None,
                 gpu_bytes: int | None = None, prompt_length: int | None = None) -> MemoryFacts:
    """Estimate a plan's peak, or say why it was skipped (no local config.json: never a guess)."""
    from seqprof.predict.architecture import resolve_architecture

    if str(plan.get("trainer") or "").lower() == "drafter":
        note = ("drafter training is not a fine-tune of the target model; the drafter's logits check "
                "(token budget x vocabulary) is lint rule SP505: `seqprof lint CONFIG --model-config TARGET --gpu ...`")
        return MemoryFacts(False, f"skipped: {note}", gpu_name=gpu_name, gpu_bytes=gpu_bytes,
                           problem=SeqprofError(note, path=plan.path))
    try:
        arch, why = resolve_architecture(plan.get("model"), model_config or plan.get("model_config_path"))
    except SeqprofError as exc:
        return MemoryFacts(False, f"skipped: {exc}", gpu_name=gpu_name, gpu_bytes=gpu_bytes, problem=exc)
    if arch is None:
        message = why.removeprefix("skipped: ").removesuffix(f"; {NO_CONFIG_FIX}")
        return MemoryFacts(False, why, gpu_name=gpu_name, gpu_bytes=gpu_bytes,
                           problem=SeqprofError(message, path=plan.path, fix=NO_CONFIG_FIX))
    try:
        setup, assumed = setup_from_plan(plan, prompt_length)
        est = estimate_memory(arch, setup)
    except SeqprofError as exc:
        return MemoryFacts(False, f"skipped: {exc.message}", architecture=arch, gpu_name=gpu_name,
                           gpu_bytes=gpu_bytes, problem=exc)
    return MemoryFacts(True, why, estimate=est, setup=setup, architecture=arch, gpu_name=gpu_name,
                       gpu_bytes=gpu_bytes, peak_bytes=est.peak_bytes, assumptions=assumed)


def memory_report(config: str, *, model_config: str | None = None, gpu: str | None = None,
                  gpu_memory: str | None = None, dialect: str | None = None,
                  prompt_length: int | None = None) -> MemoryFacts:
    """`seqprof memory`: an estimate against the GPU, or a SeqprofError with a fix (asked for, so never skipped).

    With neither --gpu nor --gpu-memory, the GPU comes from the nearest seqprof settings file.
    """
    from pathlib import Path

    from seqprof.config.read import read_plan
    from seqprof.predict.gpus import gpu_memory_bytes, parse_memory_size
    from seqprof.settings import find_settings

    plan = read_plan(config, dialect)
    unusable = next((d for d in plan.diagnostics if d.kind == "invalid_value"), None)
    if unusable is not None:  # an estimate on the default in its place would answer another config
        raise SeqprofError(f"no memory estimate: {unusable.message}", path=unusable.file, line=unusable.line,
                           fix="write a usable value (`seqprof lint` lists every one)")
    if not gpu and not gpu_memory:
        settings = find_settings(Path(config).resolve().parent)
        gpu, gpu_memory = settings.gpu, settings.gpu_memory
    name, budget = None, None
    if gpu_memory:
        name, budget = (gpu or gpu_memory), parse_memory_size(gpu_memory)
    elif gpu:
        name, budget = gpu_memory_bytes(gpu)
    facts = memory_facts(plan, model_config=model_config, gpu_name=name, gpu_bytes=budget, prompt_length=prompt_length)
    if not facts.available:
        p = facts.problem or SeqprofError(facts.note.removeprefix("skipped: "))
        raise SeqprofError(f"no memory estimate: {p.message}", path=p.path or config, line=p.line, fix=p.fix)
    return facts
