"""Training-config dialects: one module per framework, each mapping its keys onto the Plan.

Every dialect module exposes ``NAME``, ``detect(data) -> int`` (a score from the keys; 0 means
"not this framework") and ``build(cfg, variant) -> DialectResult``. Detection picks the highest
score; ties go to the earlier entry of ``DIALECTS`` (the more specific framework first).
"""

from __future__ import annotations

import re

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from seqprof.errors import SeqprofError

# most specific first: a tie between a framework and the generic HF/TRL key sets goes to it
DIALECTS: tuple[str, ...] = (
    "auto_antislop", "specforge", "speculators", "accelerate", "deepspeed", "torchtune",
    "llamafactory_v1", "llamafactory", "axolotl", "unsloth", "trl", "hf",
)
UNKNOWN = "unknown"

# other spellings accepted by --dialect, and trainer-specific variants (dialect, variant)
ALIASES: Mapping[str, tuple[str, str | None]] = {
    "transformers": ("hf", None), "hf_trainer": ("hf", None), "huggingface": ("hf", None),
    "trl_sft": ("trl", "sft"), "trl_dpo": ("trl", "dpo"), "trl_kto": ("trl", "kto"), "trl_orpo": ("trl", "orpo"),
    "trl_grpo": ("trl", "grpo"),
    "llama_factory": ("llamafactory", None), "llamafactory_v0": ("llamafactory", None),
    "auto-antislop": ("auto_antislop", None), "antislop": ("auto_antislop", None),
    "llama-factory": ("llamafactory", None), "llama-factory-v1": ("llamafactory_v1", None),
}


def module(name: str) -> ModuleType:
    """The module implementing dialect *name* (imported on first use)."""
    return importlib.import_module(f"seqprof.config.dialects.{name}")


def resolve(name: str) -> tuple[str, str | None]:
    """(dialect, variant) for a --dialect value; SeqprofError for an unknown one."""
    key = name.strip().lower().replace(" ", "_")
    if key in DIALECTS or key == UNKNOWN:
        return key, None
    norm = key.replace("-", "_")
    if norm in DIALECTS:
        return norm, None
    if key in ALIASES:
        return ALIASES[key]
    if norm in ALIASES:
        return ALIASES[norm]
    choices = ", ".join(DIALECTS + tuple(a for a in ALIASES if a.startswith("trl_")))
    raise SeqprofError(f"unknown dialect '{name}'", fix=f"use one of: {choices}")


def scores(data: Mapping[str, Any]) -> dict[str, int]:
    """Every dialect's detection score for a parsed config."""
    return {name: module(name).detect(data) for name in DIALECTS}


# ms-swift's own arguments (swift/llm/argument: BaseArguments.train_type, ModelArguments.model, RLHFArguments
# .rlhf_type; 2.x's sft_type / model_id_or_path): a file of them is read by `swift sft` or SwiftSft, not by a framework
# seqprof checks, whatever LLaMA-Factory or TRL keys (dataset, lora_rank, max_length) it shares
MS_SWIFT_KINDS = ("train_type", "tuner_type", "rlhf_type", "sft_type")  # tuner_type: 4.x's name for train_type
MS_SWIFT_MODELS = ("model", "model_type", "model_id_or_path")
LLAMAFACTORY_ONLY = ("stage", "finetuning_type")


def ms_swift_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys that make *data* ms-swift's arguments: one of its run kinds beside a model named by a string, with no
    LLaMA-Factory stage or torchtune component; [] otherwise."""
    kinds = [k for k in MS_SWIFT_KINDS if isinstance(data.get(k), str)]
    models = [k for k in MS_SWIFT_MODELS if isinstance(data.get(k), str)]
    if any(k in data for k in LLAMAFACTORY_ONLY) or "_component_" in str(data):
        return []
    if "template" in data and "model_name_or_path" in data:  # ms-swift has a template too, but names the model `model`
        return []
    if not kinds and models[:2] == ["model", "model_type"] and _ms_swift_model_type(data["model_type"]):
        return models[:2]  # `model` with ms-swift's lower-case model_type (qwen3_vl): train_type defaults to lora
    if not kinds or not models:
        return []
    if kinds == ["sft_type"] and models == ["model"]:
        return []  # sft_type alone is also a TRL recipe layer's own key (CustomPOs' sft_type); 2.x names model_type
    return kinds + models


def _ms_swift_model_type(value: str) -> bool:
    """ms-swift's model_type names a template family in lower case (qwen3_vl, llama3_2); axolotl's names a
    transformers class (AutoModelForCausalLM, LlamaForCausalLM), and axolotl calls the model base_model anyway."""
    return re.fullmatch(r"[a-z][a-z0-9_.-]*", value) is not None


# a saved PEFT adapter config (adapter_config.json, written by PeftConfig.save_pretrained and read back by
# PeftModel.from_pretrained): peft_type names the method beside the keys only a saved config writes. No training
# framework parses it, whatever LoRA keys (r, lora_alpha, loftq_config, target_modules) it shares with theirs
SAVED_ADAPTER_KEYS = ("task_type", "base_model_name_or_path", "inference_mode")


def peft_adapter_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys that make *data* a saved PEFT adapter config: a peft_type naming a method (LORA) beside one a
    saved config writes; [] otherwise."""
    kind = data.get("peft_type")
    saved = [k for k in SAVED_ADAPTER_KEYS if k in data]
    return ["peft_type", *saved] if isinstance(kind, str) and re.fullmatch(r"[A-Z][A-Z0-9_]*", kind) and saved else []


def detect(data: Mapping[str, Any]) -> str:
    """The dialect whose keys best match *data*, or 'unknown' when none matches."""
    if ms_swift_keys(data) or peft_adapter_keys(data):
        return UNKNOWN
    best, best_score = UNKNOWN, 0
    for name, score in scores(data).items():
        if score > best_score:
            best, best_score = name, score
    return best


def deciding_keys(data: Mapping[str, Any], name: str, most: int = 4) -> list[str]:
    """The keys that made *name* win: those whose removal narrows its lead over the runner-up the most (keys both
    share decide nothing; among equals, TrainingArguments fields, which every HF-based tool takes, come last), in
    file order. What lint says a file was read as, and why."""
    if name not in DIALECTS:
        return []
    every = scores(data)
    runner_up = max((n for n in DIALECTS if n != name), key=every.__getitem__)

    def lead(d: Mapping[str, Any]) -> int:
        return module(name).detect(d) - module(runner_up).detect(d)

    full = lead(data)
    weight = {k: full - lead({kk: v for kk, v in data.items() if kk != k}) for k in data}
    shared = module("hf").training_argument_fields() if name != "hf" else frozenset()  # every HF-based tool's
    order = {k: i for i, k in enumerate(data)}
    top = sorted((k for k in weight if weight[k] > 0), key=lambda k: (-weight[k], k in shared, order[k]))[:most]
    return [k for k in data if k in top]
