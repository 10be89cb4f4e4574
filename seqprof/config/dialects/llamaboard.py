"""LLaMA Board's saved arguments: the YAML LLaMA-Factory's web UI writes to llamaboard_config/ ("Save arguments").

Its keys are the web UI's element ids (``top.model_name``, ``train.cutoff_len``, ``train.training_stage:
Supervised Fine-Tuning``), not the training arguments: the UI loads the file back into its form and builds the
arguments from the form when a run starts (webui/runner.py ``Runner._parse_train_args``, and for the Evaluate &
Predict tab's form ``_parse_eval_args``: an SFT-stage do_predict / do_eval run; llamafactory 0.9.5).
That mapping is replayed here, so the file is read as the LLaMA-Factory run it starts, with each argument located at
the line of the element it came from. The element ids themselves are the UI's to check, not the user's to fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from seqprof.config.loader import LoadedConfig

# extras/constants.py TRAINING_STAGES
TRAINING_STAGES = {"Supervised Fine-Tuning": "sft", "Reward Modeling": "rm", "PPO": "ppo", "DPO": "dpo",
                   "KTO": "kto", "Pre-Training": "pt"}
# element id -> the argument Runner._parse_train_args / _parse_eval_args set from it unchanged
TOP_SAME_VALUE = {"top.model_path": "model_name_or_path", "top.finetuning_type": "finetuning_type",
                  "top.template": "template"}
SAME_VALUE = {
    **TOP_SAME_VALUE,
    "train.dataset_dir": "dataset_dir", "train.cutoff_len": "cutoff_len", "train.learning_rate": "learning_rate",
    "train.num_train_epochs": "num_train_epochs", "train.max_samples": "max_samples",
    "train.batch_size": "per_device_train_batch_size",
    "train.gradient_accumulation_steps": "gradient_accumulation_steps",
    "train.lr_scheduler_type": "lr_scheduler_type", "train.max_grad_norm": "max_grad_norm",
    "train.logging_steps": "logging_steps", "train.save_steps": "save_steps", "train.warmup_steps": "warmup_steps",
    "train.neat_packing": "neat_packing", "train.train_on_prompt": "train_on_prompt",
}
EVAL_SAME_VALUE = {
    **TOP_SAME_VALUE,
    "eval.dataset_dir": "dataset_dir", "eval.cutoff_len": "cutoff_len", "eval.batch_size": "per_device_eval_batch_size",
    "eval.max_new_tokens": "max_new_tokens", "eval.top_p": "top_p", "eval.temperature": "temperature",
}
LORA = {"train.lora_rank": "lora_rank", "train.lora_alpha": "lora_alpha", "train.lora_dropout": "lora_dropout",
        "train.lora_target": "lora_target"}
PREFERENCE = {"train.pref_beta": "pref_beta", "train.pref_ftx": "pref_ftx", "train.pref_loss": "pref_loss"}
PREFIXES = ("top.", "train.", "eval.", "infer.", "export.")


def is_board(data: Mapping[str, Any]) -> bool:
    """The file is LLaMA Board's saved form: element ids only, from its Train tab (with a training stage the UI
    offers) or its Evaluate & Predict tab (eval.* elements)."""
    return bool(data) and all(isinstance(k, str) and k.startswith(PREFIXES) for k in data) and \
        (str(data.get("train.training_stage")) in TRAINING_STAGES or
         any(k.startswith("eval.") for k in data) and not any(k.startswith("train.") for k in data))


def board_arguments(cfg: LoadedConfig) -> LoadedConfig:
    """The arguments the web UI builds from the saved form in *cfg*, each at its element's line."""
    data = cfg.data
    args: dict[str, Any] = {}
    lines: dict[str, int] = {}

    def put(arg: str, value: Any, element: str) -> None:
        args[arg] = value
        lines[arg] = cfg.line(element) or 1

    if "train.training_stage" not in data:  # Runner._parse_eval_args: an SFT-stage prediction or evaluation run
        first = next(iter(data))
        put("stage", "sft", first)
        put("do_predict" if data.get("eval.predict") else "do_eval", True, "eval.predict" if "eval.predict" in data
            else first)
        put("predict_with_generate", True, first)
        for element, arg in EVAL_SAME_VALUE.items():
            if element in data:
                put(arg, data[element], element)
        if isinstance(data.get("eval.dataset"), list):
            put("eval_dataset", ",".join(map(str, data["eval.dataset"])), "eval.dataset")
        return LoadedConfig(path=cfg.path, data=args, key_lines=lines, diagnostics=cfg.diagnostics,
                            format=cfg.format)
    put("stage", TRAINING_STAGES[data["train.training_stage"]], "train.training_stage")
    put("do_train", True, "train.training_stage")
    for element, arg in SAME_VALUE.items():
        if element in data:
            put(arg, data[element], element)
    if isinstance(data.get("train.dataset"), list):
        put("dataset", ",".join(map(str, data["train.dataset"])), "train.dataset")
    if data.get("top.booster") == "flashattn2":
        put("flash_attn", "fa2", "top.booster")
    if data.get("train.packing") or data.get("train.neat_packing"):
        put("packing", True, "train.packing" if data.get("train.packing") else "train.neat_packing")
    compute = data.get("train.compute_type")
    for name in ("fp16", "bf16", "pure_bf16"):
        if compute == name:
            put(name, True, "train.compute_type")
    if str(data.get("top.quantization_bit", "none")) != "none":
        put("quantization_bit", int(data["top.quantization_bit"]), "top.quantization_bit")
    if args.get("finetuning_type") == "lora":
        for element, arg in LORA.items():
            if element in data:
                put(arg, data[element] or "all" if arg == "lora_target" else data[element], element)
    if args["stage"] in ("dpo", "kto"):
        for element, arg in PREFERENCE.items():
            if element in data:
                put(arg, data[element], element)
    val_size = data.get("train.val_size")
    if isinstance(val_size, (int, float)) and val_size > 1e-6 and args["stage"] != "ppo":
        put("val_size", val_size, "train.val_size")
        put("eval_strategy", "steps", "train.val_size")
    extra = data.get("train.extra_args")
    if isinstance(extra, str) and extra.strip():
        try:
            parsed = json.loads(extra)
        except ValueError:
            parsed = None
        for arg, value in (parsed.items() if isinstance(parsed, dict) else ()):
            put(arg, value, "train.extra_args")
    return LoadedConfig(path=cfg.path, data=args, key_lines=lines, diagnostics=cfg.diagnostics, format=cfg.format)
