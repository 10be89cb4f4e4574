"""TRL configs (``trl sft|dpo|grpo|... --config x.yaml``): TrainingArguments plus TRL's own keys.

Keys: TrainingArguments (see seqprof.config.dialects.hf) plus the fields of every trainer config trl 1.16
ships (SFT, DPO, KTO, ORPO, CPO, GRPO, RLOO, online DPO, reward, GKD, distillation), ModelConfig,
ScriptArguments and the scripts' own argument classes (keys/trl_configs.json, generated from the installed
classes by scripts/gen_dialect_keys.py --only trl); the TRL CLI also accepts ``env`` and hands keys no class
takes to ``accelerate launch`` (so its launch options are keys too). A key no class has is a note (SP407),
not a typo, unless it is a near miss of one: recipes (alignment-handbook, open-r1) extend the parsers.

A TRL YAML does not name its trainer (it is the CLI sub-command), so the trainer kind is
inferred from the keys (KTO weights -> kto, preference keys -> dpo, otherwise sft) unless the
dialect is given as ``trl_sft``/``trl_dpo``/``trl_kto``/``trl_orpo``.

Defaults that differ from TrainingArguments (trl/trainer/sft_config.py, dpo_config.py):
- gradient_checkpointing True in every TRL config (TRL overrides transformers' False);
- bf16 True unless fp16 is set (``self.bf16 = not self.fp16`` in __post_init__);
- SFT: max_length 1024, packing False (strategy "bfd", which also turns on padding-free),
  padding_free False, learning_rate 2e-5; the collator pads each batch to its longest row and
  sequences longer than max_length are truncated;
- DPO: max_length 1024, learning_rate 1e-6, max_prompt_length 512 (the old default TRL 0.28
  keeps while the key is deprecated), truncation_mode "keep_end";
- KTO/ORPO: max_length 1024 (max_prompt_length 512 in TRL 0.28; gone from KTOConfig in 1.16).

Version renames reported: SFTConfig ``max_seq_length`` -> ``max_length`` (deprecated in
0.16, removed in 0.20; huggingface/trl#3912); DPOConfig ``max_prompt_length`` and
``max_completion_length`` deprecated in 0.28 for removal in 0.29 (huggingface/trl#4969), with
``rpo_alpha``, ``reference_free``, ``generate_during_eval``, ``use_logits_to_keep`` and the
adapter-name keys; DPO ``padding_value`` removed in 0.26 (huggingface/trl#4607, use pad_token).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from packaging.version import Version

from seqprof.config.dialects import hf
from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    Moved,
    as_bool,
    as_number,
    check_keys,
    load_keys_file,
    premature_key,
    split_list,
)
from seqprof.config.dialects.enum_values import names_the_release_lacks
from seqprof.config.dialects.grpo_batch import generation_batch_refused
from seqprof.config.dialects.vllm_mode import server_settings_unread
from seqprof.config.dialects.own_schema import composed, hand_mapped, mostly_foreign, own_sections
from seqprof.config.dialects.recipes import named_trainer, read_by_own_classes, with_recipe_layer
from seqprof.config.dialects.constant_warmup import warmup_unread
from seqprof.config.dialects.fsdp_checkpointing import checkpointing_twice
from seqprof.config.dialects.report_to import report_to_null
from seqprof.config.dialects.resume_flag import resume_needs_checkpoint
from seqprof.config.dialects.save_schedule import refused_save_schedules
from seqprof.config.dialects.scheduler_kwargs import scheduler_kwargs_problems
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.parser_classes import leftovers_taken_back, own_parser_fate, undeclared_by_parser
from seqprof.config.project_fields import field_owners, project_fields, read_by_project, renamed_by_project
from seqprof.config.project_scripts import launched_trainer
from seqprof.config.text_numbers import numbers_read_as_text
from seqprof.config.trl_imports import missing_import_diagnostics
from seqprof.config.key_history import KeyHistory, assumed, describe_versions, with_companions, with_trl_and_transformers
from seqprof.config.pins import Pins
from seqprof.config.versions import pins_beside

NAME = "trl"
USES_PINS = True  # read_plan hands build() the version pins (--versions, else the files beside the config)
PACKAGES = ("trl", "transformers")
LABEL = "TRL"
VARIANTS = ("sft", "dpo", "kto", "orpo", "grpo")

SFT_RENAMED = {"max_seq_length": Moved("max_length", "deprecated in TRL 0.16 and removed from SFTConfig in "
                                                     "0.20 (huggingface/trl#3912)")}
_DPO_028 = "deprecated in TRL 0.28 and removed in 0.29 (huggingface/trl#4969, #3906)"
DPO_DEPRECATED = {
    "max_prompt_length": Moved(None, _DPO_028 + "; filter over-long prompts from the dataset instead"),
    # dpo_config.py 0.28: "We recommend using `max_length` instead": the bound on prompt + completion that DPOConfig
    # has always had, not a new name (a config passing both would set max_length twice)
    "max_completion_length": Moved(None, _DPO_028 + "; bound prompt + completion with max_length (DPOConfig's own "
                                                    "total-length field) instead"),
    "rpo_alpha": Moved("loss_type", _DPO_028 + "; add 'sft' to loss_type and weight it in loss_weights"),
    "reference_free": Moved(None, _DPO_028 + "; use the experimental CPOTrainer"),
    "generate_during_eval": Moved(None, _DPO_028 + "; use a callback"),
    "use_logits_to_keep": Moved(None, _DPO_028),
    "force_use_ref_model": Moved(None, _DPO_028),
    "model_adapter_name": Moved(None, _DPO_028),
    "ref_adapter_name": Moved(None, _DPO_028),
    "ref_model_init_kwargs": Moved(None, _DPO_028),
    "base_model_attribute_name": Moved(None, _DPO_028),
    "label_pad_token_id": Moved(None, _DPO_028),
    "tools": Moved(None, _DPO_028 + "; pass tools in the dataset"),
}
DPO_RENAMED = {"padding_value": Moved("pad_token", "removed from DPOConfig in TRL 0.26 (huggingface/trl#4607)",
                                      value_change="pad_token takes the padding token itself, not its id")}
# Renames out of TRL 0.28's configs that TRL 1.16's lack, with the change that made them. Every other field the
# older configs had and 1.16 lacks comes from keys/key_history.json (scripts/gen_key_history.py): removals whose
# severity depends on the trl version the project pins (seqprof.config.versions).
REMOVED_RENAMED = {
    "use_liger": Moved("use_liger_kernel", "an old SFTConfig field; transformers' TrainingArguments names it "
                                           "use_liger_kernel, and TRL 1.16 has no use_liger"),
    "torch_dtype": Moved("dtype", "ModelConfig renamed it in TRL 0.23 and removed it in 0.27 (huggingface/trl#4000, "
                                  "#4651)"),
    "gradient_checkpointing_use_reentrant": Moved(None, "a ScriptArguments field of the TRL scripts; set "
                                                        "gradient_checkpointing_kwargs: {use_reentrant: ...} instead"),
}
# the classes whose history decides a key, per trainer (then these, then every class keys/trl_configs.json lists)
TRAINER_CLASSES = {"sft": "SFTConfig", "dpo": "DPOConfig", "kto": "KTOConfig", "orpo": "ORPOConfig",
                   "grpo": "GRPOConfig"}
ARGUMENT_CLASSES = ("ModelConfig", "ScriptArguments", "GRPOScriptArguments", "RLOOScriptArguments",
                    "DatasetMixtureConfig")
# Keys the recipe layers built on TRL read through their own dataclasses: alignment-handbook (ModelArguments,
# DataArguments, its SFTConfig/DPOConfig subclasses) and open-r1 (src/open_r1/configs.py: SFTConfig/GRPOConfig
# subclasses and GRPOScriptArguments). Not TRL fields, but not typos either: SP407 notes, never a did-you-mean.
# alignment-handbook's DataArguments (src/alignment/configs.py), which only its TRL-based recipes and their forks
# (SimPO, SPIN, Aria ...) read: evidence of TRL even where no TRL field is set
HANDBOOK_DATA_KEYS = frozenset({"dataset_mixer", "dataset_splits", "dataset_configs", "auto_insert_empty_system_msg"})
RECIPE_KEYS = HANDBOOK_DATA_KEYS | frozenset({
    # alignment-handbook
    "preprocessing_num_workers", "truncation_side", "text_column", "use_flash_attention_2", "hub_model_revision",
    # open-r1
    "benchmarks", "callbacks", "chat_template", "system_prompt", "overwrite_hub_revision", "push_to_hub_revision",
    "wandb_entity", "wandb_project", "wandb_run_group", "wandb_log_unique_prompts", "reward_funcs",
    "cosine_min_value_wrong", "cosine_max_value_wrong", "cosine_min_value_correct", "cosine_max_value_correct",
    "cosine_max_len", "repetition_n_grams", "repetition_max_penalty", "code_language", "code_eval_test_batch_size",
    "code_eval_scoring_mode", "parallel_code_exec_per_proc", "dataset_prompt_column", "max_completion_len",
    "soft_punish_cache", "e2b_router_url", "morph_router_url", "code_provider", "ioi_provider", "enforce_same_language",
})
RECIPES = "alignment-handbook and open-r1 recipes read it through their own arguments"
# `trl sft|dpo|grpo ... --config x.yaml` hands keys no dataclass takes to `accelerate launch`
# (trl/cli/commands/training.py), so accelerate's launch options are keys of a TRL YAML too.
ACCELERATE_LAUNCH_KEYS = frozenset({
    "num_processes", "num_machines", "machine_rank", "main_process_ip", "main_process_port", "config_file",
    "accelerate_config", "mixed_precision", "dynamo_backend", "gpu_ids", "same_network", "rdzv_backend",
    "deepspeed_config_file", "zero_stage", "fsdp_config", "use_deepspeed", "use_fsdp", "num_cpu_threads_per_process",
})

# keys that point at one trainer (TRL's CLI names the trainer, the YAML does not)
GRPO_KEYS = frozenset({
    "num_generations", "use_vllm", "vllm_mode", "vllm_gpu_memory_utilization", "reward_weights", "reward_funcs",
    "num_iterations", "scale_rewards", "mask_truncated_completions", "log_completions", "num_completions_to_print",
    "generation_batch_size", "steps_per_generation", "vllm_server_host", "vllm_server_port", "epsilon_high",
})
KTO_KEYS = frozenset({"desirable_weight", "undesirable_weight"})
PREFERENCE_KEYS = frozenset({
    "beta", "ref_model_init_kwargs", "precompute_ref_log_probs", "precompute_ref_batch_size", "reference_free",
    "rpo_alpha", "sync_ref_model", "ref_model_mixup_alpha", "ref_model_sync_steps", "f_divergence_type",
    "f_alpha_divergence_coef", "use_weighting", "ld_alpha", "discopop_tau", "loss_weights", "max_prompt_length",
    "max_completion_length", "truncation_mode", "label_smoothing",
})
SFT_KEYS = frozenset({
    "dataset_text_field", "packing", "packing_strategy", "completion_only_loss", "assistant_only_loss",
    "max_seq_length", "eval_packing", "dataset_kwargs", "shuffle_dataset", "chat_template_path",
})
STRONG_KEYS = frozenset({
    "dataset_text_field", "completion_only_loss", "assistant_only_loss", "padding_free", "packing_strategy",
    "dataset_name", "use_peft", "desirable_weight", "undesirable_weight", "precompute_ref_log_probs",
    "truncation_mode", "max_completion_length", "dataset_train_split", "dataset_config", "chat_template_path",
    "eval_packing", "shuffle_dataset", "lora_task_type", "use_bnb_nested_quant", "bnb_4bit_quant_type",
    "ref_model_init_kwargs", "sync_ref_model",
})
WEAK_KEYS = frozenset({"max_length", "max_seq_length", "beta", "packing", "model_name_or_path",
                       "max_prompt_length", "lora_r", "dataset_num_proc", "attn_implementation", "loss_type"})

SOURCE_SFT = "TRL SFTConfig default (trl/trainer/sft_config.py)"
SOURCE_DPO = "TRL DPOConfig default (trl/trainer/dpo_config.py)"


@cache
def trl_fields() -> frozenset[str]:
    classes = load_keys_file("trl_configs")["classes"]
    return frozenset(k for keys in classes.values() for k in keys)


# OnPolicyConfig's own fields (trl 0.11-1.12): PPOConfig's and the old RLOOConfig's, no other trainer's
ON_POLICY_KEYS = frozenset({"total_episodes", "num_ppo_epochs", "num_mini_batches", "local_rollout_forward_batch_size",
                            "response_length", "sft_model_path", "kl_coef", "cliprange", "vf_coef", "whiten_rewards",
                            "non_eos_penalty", "num_sample_generations", "stop_token", "stop_token_id"})
# the config class of each trainer: the history that judges its keys, and the fields (with TrainingArguments' and the
# argument classes') a near miss can be a typo of: `adv_alpha` in a GRPO recipe is no typo of DPOConfig's `ld_alpha`
CONFIG_CLASSES = {"sft": "SFTConfig", "dpo": "DPOConfig", "kto": "KTOConfig", "orpo": "ORPOConfig", "cpo": "CPOConfig",
                  "grpo": "GRPOConfig", "rloo": "RLOOConfig", "online_dpo": "OnlineDPOConfig",
                  "reward": "RewardConfig", "gkd": "GKDConfig"}


# and PPO's: the class whose history judges a trainer's keys (CONFIG_CLASSES, which also feeds the typo and
# trainer-only lists, leaves PPO out)
TRAINER_CONFIGS = {**CONFIG_CLASSES, "ppo": "PPOConfig"}


def _fields(cls: str) -> frozenset[str]:
    return frozenset(load_keys_file("trl_configs")["classes"].get(cls, ()))


@cache
def _only_fields() -> dict[str, frozenset[str]]:
    """Trainer -> the fields its config class alone has (RewardConfig's center_rewards_coefficient)."""
    classes = load_keys_file("trl_configs")["classes"]
    return {trainer: frozenset(classes.get(cls, ())) - frozenset().union(
        *(frozenset(v) for k, v in classes.items() if k != cls)) for trainer, cls in CONFIG_CLASSES.items()}


def keyspace(trainer: str, history: KeyHistory | None = None) -> Keyspace:
    """TrainingArguments + TRL keys; the renames that apply to *trainer*, and every field older TRL configs had."""
    history = history or KeyHistory.load()
    base = hf.keyspace(history)
    renamed: dict[str, Moved] = dict(base.renamed)
    deprecated: dict[str, Moved] = dict(base.deprecated)
    deprecated.pop("gradient_checkpointing", None)  # TRL's configs still define it (default True)
    if "max_length" in history.ever("trl", [TRAINER_CONFIGS.get(trainer, "SFTConfig")]):
        renamed.update(SFT_RENAMED)  # a GRPO or PPO recipe has no max_length to rename max_seq_length to
    known_now = trl_fields() | hf.training_argument_fields() | ACCELERATE_LAUNCH_KEYS | RECIPE_KEYS
    own_class = TRAINER_CONFIGS.get(trainer)
    for key, classes in removed_fields(history).items():
        if key not in known_now and key not in renamed:  # the trainer's own class first: the one that judges it
            named = [own_class] if own_class in classes else classes
            deprecated.setdefault(key, Moved(None, f"a field of TRL's {', '.join(named)} in earlier releases"))
    deprecated.update({k: v for k, v in REMOVED_RENAMED.items() if k not in trl_fields()})
    if trainer in ("dpo",):
        deprecated.update(DPO_DEPRECATED)
        renamed.update(DPO_RENAMED)
    # a field the trainer's own config class had in any release is no unknown key, whatever removed_fields leaves
    # out (RLOOConfig.normalize_advantage, trl 0.14-0.21, in a recipe pinned to trl 0.16)
    own_ever = history.ever("trl", [own_class]) if own_class else set()
    known = (base.known | trl_fields() | {"gradient_checkpointing"} | ACCELERATE_LAUNCH_KEYS | own_ever) \
        - set(renamed) - set(deprecated)
    typo_targets = None
    if trainer in CONFIG_CLASSES:  # another trainer's field is accepted (the trainer may be misread), never advised
        own = _fields(CONFIG_CLASSES[trainer]) | frozenset().union(*(_fields(c) for c in (*ARGUMENT_CLASSES, "cli")))
        typo_targets = frozenset(known & ((base.typo_targets or base.known) | own | ACCELERATE_LAUNCH_KEYS
                                          | {"gradient_checkpointing"}))
    return Keyspace(known=frozenset(known), renamed=renamed, deprecated=deprecated, typo_targets=typo_targets)


def removed_fields(history: KeyHistory) -> dict[str, list[str]]:
    """Field -> the trainer configs (and ModelConfig) that had it in some release, per the generated history."""
    out: dict[str, list[str]] = {}
    for cls in (*TRAINER_CLASSES.values(), "CPOConfig", "ModelConfig"):
        for key in sorted(history.ever("trl", [cls])):
            out.setdefault(key, []).append(cls)
    return out


def lookup_classes(trainer: str, key: str, history: KeyHistory) -> list[str]:
    """The TRL classes whose history decides *key*: the trainer's config and the script arguments, else any."""
    own = [c for c in (TRAINER_CONFIGS.get(trainer, "SFTConfig"), *ARGUMENT_CLASSES)
           if key in history.ever("trl", [c])]
    if own:
        return own
    listed = [c for c in load_keys_file("trl_configs")["classes"] if c != "cli"]
    return [c for c in listed if key in history.ever("trl", [c])]


def removal_judge(trainer: str, pins: Pins, history: KeyHistory):
    """key -> Removal (seqprof.config.versions) under *pins*: a TRL field by trl's pin, a TrainingArguments one
    by transformers'."""
    def judge(key: str):
        classes = lookup_classes(trainer, key, history)
        if classes:
            return history.removal("trl", key, classes, pins)
        return history.removal("transformers", key, ["TrainingArguments"], pins)
    return judge


def arrival_judge(trainer: str, pins: Pins, history: KeyHistory):
    """replacement -> Removal('later') when no release *pins* allow has it yet: by trl's pin for a TRL field,
    by transformers' for a TrainingArguments one."""
    def judge(replacement: str, since: str | None = None):
        classes = lookup_classes(trainer, replacement, history)
        if classes:
            return history.arrival("trl", replacement, classes, pins, since)
        return history.arrival("transformers", replacement, ["TrainingArguments"], pins, since)
    return judge


def _kept_by_trl_copy(found: list[ConfigDiagnostic], fields: dict) -> list[ConfigDiagnostic]:
    """A removal or rename of a key that the project's own copy of TRL declares is no upgrade hazard: its scripts
    import that copy ahead of the installed trl (xsc1234/RLKD's src/open_r1/trl, trl 0.16's ModelConfig.torch_dtype),
    so a newer trl release never reaches the key. An SP407 note says where it is declared."""
    out = []
    for d in found:
        field = fields.get(d.key)
        if d.kind in ("removed_key", "deprecated_key", "renamed_key") and field is not None and field.in_trl_copy():
            d = replace(d, kind="unread_key", suggestion=None, value_change=None, suggestion_from=None,
                        message=f"'{d.key}' is a field of {field.where()}, in the project's own copy of TRL, which its "
                                "scripts import instead of an installed trl: a trl upgrade does not change it")
        out.append(d)
    return out


def premature_keys(cfg: LoadedConfig, trainer: str, pins: Pins, history: KeyHistory,
                   judged: set[str], fate: str) -> list[ConfigDiagnostic]:
    """Top-level keys of a TRL config that the pinned trl (or transformers, for TrainingArguments fields) does not
    have yet: TrlParser hands every key to HfArgumentParser, which refuses ones no dataclass declares (*fate*: what
    the parser that reads the file does with them)."""
    out: list[ConfigDiagnostic] = []
    trainer_class = TRAINER_CONFIGS.get(trainer, "SFTConfig")
    allowed = set(history.allowed("trl", pins) or ())
    class_released = any(history.having("trl", f, [trainer_class]) & allowed
                         for f in history.ever("trl", [trainer_class]))
    training_arguments = history.ever("transformers", ["TrainingArguments"])
    for key in cfg.data:
        if not isinstance(key, str) or key in judged:
            continue
        classes = lookup_classes(trainer, key, history)
        if classes and all(c.endswith("ScriptArguments") for c in classes):
            continue  # recipes declare their own script arguments (open-r1's GRPOScriptArguments.reward_funcs)
        package = "trl" if classes else "transformers"
        if not classes:
            if key not in training_arguments:
                continue
            classes = ["TrainingArguments"]
        elif trainer_class in classes and not class_released:
            continue  # the trainer's config itself is newer than the pin: the recipe cannot run as pinned anyway
        early = history.premature(package, key, classes, pins)
        if early is not None:
            out.append(premature_key(cfg, key, " / ".join(classes), early.detail, fate, early.removed_in))
    return out


def unknown_key_fate(releases: list[str]) -> str:
    """What TrlParser does with a YAML key no argument class declares, in *releases* (ascending). Before 0.10 it
    fills only the fields the classes declare and ignores the rest (commands/cli_utils.py YamlConfigParser
    .merge_dataclasses); from 0.10 to 0.12 it raises ("not used by the TrlParser", commands/cli_utils.py); from 0.13
    to 0.18 set_defaults_with_config returns it as a remaining string that parse_args_and_config drops
    (scripts/utils.py); from 0.19 on it raises ("Unknown arguments from config file", fail_with_unknown_args=True)."""
    def drops(v: str) -> bool:
        return Version(v) < Version("0.10") or Version("0.13") <= Version(v) < Version("0.19")

    dropping = [v for v in releases if drops(v)]
    dropped = ("TrlParser drops a key no argument class declares without a word, so the setting has no effect "
               "(the `trl` CLI hands it to accelerate launch, which refuses it)")
    if dropping and len(dropping) == len(releases):
        return f"at trl {'.'.join(dropping[-1].split('.')[:2])} {dropped}"
    if dropping:
        early = [v for v in dropping if Version(v) < Version("0.10")]
        spans = (["before trl 0.10"] if early else []) + (["from trl 0.13 to 0.18"] if len(early) < len(dropping)
                                                          else [])
        return f"TrlParser refuses a key no argument class declares, except {' and '.join(spans)}, where it " \
               "drops it without a word"
    return "TrlParser refuses a key no argument class declares"


def leftovers_fate(config_path: str, keys: list[str], releases: list[str]) -> str | None:
    """What happens to a key no argument class declares where the project's script takes TrlParser's leftover keys
    back (parse_args_and_config(return_remaining_strings=True), TRL 0.13 on: set_defaults_with_config returns
    them); None where it does not."""
    if not releases or min(Version(v) for v in releases) < Version("0.13"):
        return None
    where = leftovers_taken_back(config_path, keys) if Path(config_path).is_file() else None
    return None if where is None else (
        f"the project's script takes the keys no argument class declares back from TrlParser ({where}: "
        "parse_args_and_config with return_remaining_strings=True or fail_with_unknown_args=False), so TrlParser "
        "drops a key no argument class declares without a word, and the setting has no effect")


# TrainingArguments fields transformers 5 removed that nothing ever read: dropped, they change nothing
NEVER_READ = frozenset({"overwrite_output_dir"})


def _dead_and_dropped(found: list[ConfigDiagnostic], fate: str, removal, path: str) -> list[ConfigDiagnostic]:
    """A key nothing ever read, removed from every release the pins allow, where the parser drops keys no class
    declares (TrlParser 0.13-0.18: shangshang-wang/Tina at trl==0.15.2 beside an unpinned transformers): it has no
    effect, so a note, not a warning that the run breaks. Where the pinned release still has it, the warning that
    the upgrade (of transformers, and of trl to a release that refuses it) breaks it stands."""
    if "drops a key" not in fate or "refuses a key" in fate or not path.lower().endswith((".yaml", ".yml")):
        return found  # (a JSON file goes through parse_json_file, which refuses it: Flash161203's dpo_config.json)

    def gone(key: str) -> bool:
        judged = removal(key) if key in NEVER_READ else None
        return judged is not None and judged.verdict in ("error", "assumed")

    return [replace(d, kind="unread_key", suggestion=None, value_change=None,
                    message=f"'{d.key}' was {hf.LEGACY_DEPRECATED[d.key].why}; {fate}: removing it changes "
                            "nothing")
            if d.kind in ("removed_key", "deprecated_key") and gone(d.key) else d for d in found]


def _if_nothing_reads_it(message: str, fate: str) -> str:
    """A key no TRL class declares, and what TrlParser at the pinned releases does with it if no script reads it."""
    asked = "" if message.endswith(".") else ": read by your own script's arguments?"
    return f"{message}{asked} If nothing reads it, {fate}"


def detect(data: Mapping[str, Any]) -> int:
    """TRL by evidence: one of its distinctive keys, or `model_name_or_path` (ModelConfig) beside keys that only
    TRL's configs define (`max_length`, `beta`, `num_generations`, ...), with or without `dataset_name`."""
    if hand_mapped(data) or own_sections(data) or composed(data):
        return 0
    if isinstance(data.get("rl"), str) and "base_model" in data and "model_name_or_path" not in data:
        return 0  # axolotl's `rl: orpo` selector beside its required base_model, which no TRL config ever had,
        # however many TrainingArguments and ModelConfig names the file also carries (ArtisanClarinets/frappe-llm)
    if mostly_foreign(data, trl_fields() | hf.training_argument_fields() | _model_config_fields()):
        return 0
    strong = sum(3 for k in data if k in STRONG_KEYS)
    evidence = {k for k in data if (k in trl_only_fields() or k in HANDBOOK_DATA_KEYS) and k not in SHARED_NAMES}
    older = {k for k in data if k in trl_fields_ever() and k not in SHARED_NAMES} - evidence
    if not strong and not ("model_name_or_path" in data and ("dataset_name" in data or evidence)) \
            and len(evidence | older) < 2:  # a script's own `model:` beside SFTConfig's packing, max_seq_length
        return 0
    weak = sum(1 for k in data if k in WEAK_KEYS)
    base = sum(1 for k in data if k in hf.training_argument_fields())
    if not (strong or weak or base):  # sampling settings alone (temperature, top_p, max_new_tokens beside a vLLM
        return 0  # engine's gpu_memory_utilization): an evaluation script's file, no trainer's arguments
    return strong + weak + base + len(evidence)


# ModelConfig fields that projects' own model arguments name the same way (lavaman131's ModelArguments.torch_dtype
# beside its own model_id); the rest of ModelConfig's fields (model_name_or_path, model_revision, use_peft, ...) are
# the evidence that TRL's ModelConfig is among the parser's classes
GENERIC_MODEL_KEYS = frozenset({"torch_dtype", "dtype", "attn_implementation", "load_in_4bit", "load_in_8bit",
                                "bnb_4bit_quant_type", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules"})
# names other readers share (transformers' example scripts: torch_dtype, attn_implementation; axolotl's schema and
# projects' own LoRA arguments: lora_r, lora_alpha, trust_remote_code, datasets): no evidence of TRL on their own
SHARED_NAMES = frozenset({"torch_dtype", "dtype", "attn_implementation", "lora_r", "lora_alpha", "lora_dropout",
                          "lora_target_modules", "trust_remote_code", "datasets"})
VERSION_KINDS = frozenset({"deprecated_key", "renamed_key", "removed_key", "upcoming_deprecation", "premature_key"})


def _own_model_arguments(diagnostics: list[ConfigDiagnostic], data: Mapping[str, Any],
                         config_path: str) -> list[ConfigDiagnostic]:
    """A ModelConfig change (torch_dtype -> dtype) is TRL's business only where ModelConfig parses the file.

    A recipe names its model through ModelConfig (model_name_or_path, or model_revision with the path on the
    command line); a file with neither, nor any other field only ModelConfig has, names its model through the
    project's own arguments (model_id, model_name), and those read the generic keys beside it, unless the script
    that parses the file hands TRL's own ModelConfig to its parser (rescuerz/dLLM_factory_dynamic's
    `TrlParser((DiffuGRPOConfig, ModelConfig))`, its model path given on the command line). A parser over the
    installed alignment-handbook's ModelArguments reads them into that class, whatever else the file sets."""
    handbook = _parses_handbook_model_arguments(config_path, data)
    if handbook:
        return [replace(d, kind="unread_key", suggestion=None, value_change=None, suggestion_from=None,
                        message=f"'{d.key}' is a field of alignment-handbook's own ModelArguments, which {handbook} "
                                "parses the file into, not of TRL's ModelConfig: TRL's changes to ModelConfig do not "
                                "reach it (the handbook releases that export ModelArguments, up to 0.3, declare "
                                "it): the project's script reads it")
                if d.kind in VERSION_KINDS and d.key in GENERIC_MODEL_KEYS else d for d in diagnostics]
    evidence = _model_config_fields() - GENERIC_MODEL_KEYS
    if any(k in evidence for k in data) or _parses_trl_model_config(config_path, data):
        return diagnostics
    return [replace(d, kind="unread_key", suggestion=None, value_change=None, suggestion_from=None,
                    message=f"'{d.key}' is a field of TRL's ModelConfig, but the file sets no field only ModelConfig "
                            "has (model_name_or_path, model_revision, use_peft, ...): the project's script reads it "
                            "through its own model arguments, which TRL's changes to ModelConfig do not reach")
            if d.kind in VERSION_KINDS and d.key in GENERIC_MODEL_KEYS else d for d in diagnostics]


_TRL_MODEL_CONFIG = re.compile(r"^\s*from\s+trl[\w.]*\s+import\s+[^\n]*\bModelConfig\b(?!\s+as)", re.M)


def _parses_trl_model_config(config_path: str, data: Mapping[str, Any]) -> bool:
    """A script that parses the file imports TRL's ModelConfig and names it in its parser call."""
    from seqprof.config.project_fields import project_root, source_text
    from seqprof.config.project_scripts import parser_scripts

    root = project_root(config_path)
    for script in parser_scripts(config_path, [k for k in data if isinstance(k, str)]):
        text = source_text(root / script.file)
        if _TRL_MODEL_CONFIG.search(text) and re.search(r"Parser\s*\(\s*[(\[][^)\]]*\bModelConfig\b", text):
            return True
    return False


def _parses_handbook_model_arguments(config_path: str, data: Mapping[str, Any]) -> str:
    """'file:line' of a parser call of a script that parses the file and names alignment-handbook's ModelArguments
    (imported from the installed `alignment` package, none in the checkout) but not TRL's ModelConfig: PenGuln/DFT's
    run_dft.py, `H4ArgumentParser((ModelArguments, DataArguments, DFTConfig))`; '' otherwise."""
    import ast

    from seqprof.config.project_fields import called_name, imported_names, parsed_module, project_root, python_files
    from seqprof.config.project_scripts import parser_scripts

    root = project_root(config_path)
    if any("alignment" in f.relative_to(root).parts[:-1] or f.stem == "alignment" for f in python_files(root)):
        return ""  # the checkout holds its own alignment package: its ModelArguments is read as the project's
    for script in parser_scripts(config_path, [k for k in data if isinstance(k, str)]):
        tree = parsed_module(root / script.file, ("ModelArguments",))
        if tree is None:
            continue
        imported = imported_names(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and called_name(node.func).endswith("Parser") and node.args
                    and isinstance(node.args[0], (ast.Tuple, ast.List))):
                continue
            named = {imported.get(called_name(item), "") for item in node.args[0].elts}
            if "alignment.ModelArguments" in named and not any(n.startswith("trl") for n in named):
                return f"{script.file}:{node.lineno}"
    return ""


@cache
def _model_config_fields() -> frozenset[str]:
    return frozenset(KeyHistory.load().ever("trl", ["ModelConfig"]))


@cache
def trl_fields_ever() -> frozenset[str]:
    """Fields TRL's trainer configs had in any release (keys/key_history.json) that TrainingArguments never had."""
    history = KeyHistory.load()
    classes = [c for c in load_keys_file("trl_configs")["classes"] if c not in ("cli", "ModelConfig",
                                                                               "ScriptArguments")]
    return frozenset(history.ever("trl", classes) - history.ever("transformers", ["TrainingArguments"])
                     - hf.training_argument_fields() - {"model_name_or_path"})


@cache
def trl_only_fields() -> frozenset[str]:
    """Fields of TRL's trainer configs that TrainingArguments does not have."""
    return trl_fields() - hf.training_argument_fields() - {"model_name_or_path"}


# GRPO keys that other online trainers and recipes' own scripts log with too: alone, they do not outweigh a path
# that names another trainer (Semantic-Voting's configs/dpo/*.yaml keep open-r1's log_completions; philschmid's
# recipes/iterative_dpo/dev.yaml counts its outer DPO rounds in num_iterations)
SHARED_GRPO_KEYS = frozenset({"log_completions", "num_completions_to_print", "use_vllm", "num_iterations"})
# DPOConfig keys GRPOConfig, KTOConfig, ORPOConfig and CPOConfig have had too (trl grpo_config.py max_prompt_length /
# max_completion_length / beta; kto_config.py and orpo_config.py beta, max_prompt_length): alone, the path decides
SHARED_PREFERENCE_KEYS = frozenset({"beta", "max_prompt_length", "max_completion_length", "loss_type"})
# DPOConfig loss_type values no other trainer's config takes (trl 0.9-0.19 dpo_config.py; kto_pair to 0.11): KTO has
# kto / apo_zero_unpaired, CPO sigmoid / hinge / ipo / simpo / alphapo, GRPO its own
DPO_ONLY_LOSS_TYPES = frozenset({"kto_pair", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot",
                                 "aot_pair", "apo_zero", "apo_down", "discopop"})
# CPOConfig loss_type values DPOConfig never took (trl cpo_config.py: simpo from 0.10, alphapo from 0.23)
CPO_ONLY_LOSS_TYPES = frozenset({"simpo", "alphapo"})
# CPOConfig-only fields whose names projects' own scripts use for other things (`alpha` of a mixing weight)
GENERIC_ONLY_FIELDS = frozenset({"alpha", "padding_value"})
def infer_trainer(data: Mapping[str, Any], path: str | None = None) -> tuple[str, str]:
    """(trainer, why) from the keys of a TRL YAML, and where they leave it open (GRPO or preference keys every
    trainer shares, or none), from the trainer the project's parser script builds, else the one its path names."""
    keys = set(data)
    launched = launched_trainer(path) if path else None
    if launched is not None and launched[0] in (*CONFIG_CLASSES, "ppo"):
        return launched
    grpo = keys & GRPO_KEYS
    named, named_why = named_trainer(data, path)
    own = _only_fields()
    own_fields = set(field_owners(path)) if path else set()  # the project's RLOOScriptArguments.reward_funcs
    for trainer in ("reward", "rloo", "online_dpo", "cpo"):
        only = keys & own[trainer] - GENERIC_ONLY_FIELDS
        paths = (None, trainer, "dpo") if trainer == "cpo" else (None, trainer)  # a simpo/ or dpo/ path holds CPO
        if only and named in paths and not only <= own_fields:
            return trainer, "inferred from " + ", ".join(sorted(only)) + f" (fields only {CONFIG_CLASSES[trainer]} has)"
    if str(data.get("loss_type")) in CPO_ONLY_LOSS_TYPES and named in (None, "cpo", "dpo") \
            and "loss_type" not in own_fields:  # SimPO's own SimPOConfig(TrainingArguments) takes alphapo too
        return "cpo", f"inferred from loss_type: {data['loss_type']} (a loss only CPOConfig takes)"
    if grpo and named == "rloo" and grpo - own_fields <= _fields("RLOOConfig"):
        own = f" (the project's own classes declare {', '.join(sorted(grpo & own_fields))})" \
            if grpo & own_fields - _fields("RLOOConfig") else ""
        return "rloo", f"{named_why}; its GRPO keys, {', '.join(sorted(grpo))}, are fields of RLOOConfig too{own}"
    if named == "ppo" and keys & ON_POLICY_KEYS:  # jianzhnie's ppo/config_demo.yaml: total_episodes, num_ppo_epochs
        return "ppo", f"{named_why}; its on-policy keys, {', '.join(sorted(keys & ON_POLICY_KEYS))}, are PPOConfig's"
    if grpo and grpo <= SHARED_GRPO_KEYS and named in ("dpo", "kto", "orpo", "cpo", "sft"):
        return named, f"{named_why}; its only GRPO keys, {', '.join(sorted(grpo))}, are logged by other recipes too"
    if grpo:  # before DPO: GRPO configs set beta and max_completion_length too
        return "grpo", "inferred from " + ", ".join(sorted(keys & GRPO_KEYS)) + " (GRPOConfig keys)"
    if str(data.get("loss_type")) in DPO_ONLY_LOSS_TYPES:  # before the path: a kto/ recipe of loss_type kto_pair
        return "dpo", f"inferred from loss_type: {data['loss_type']} (a loss only DPOConfig takes)"
    if keys & KTO_KEYS:
        return "kto", "inferred from " + ", ".join(sorted(keys & KTO_KEYS)) + " (KTOConfig keys)"
    pref = keys & PREFERENCE_KEYS
    if pref and pref <= SHARED_PREFERENCE_KEYS and named in ("grpo", "kto", "orpo", "cpo"):
        return named, (f"{named_why}; its preference keys, {', '.join(sorted(pref))}, are fields of "
                       f"{named.upper()}Config too")
    if pref and not (keys & SFT_KEYS - own_fields):  # an SFT key the project's own class declares (CustomPOs'
        # CustomPOConfig.max_seq_length) is no sign of SFTConfig
        return "dpo", "inferred from " + ", ".join(sorted(pref)) + " (preference-training keys)"
    if named and named != "sft" and not (keys & SFT_KEYS) and not pref:  # nothing in the keys decides: the path
        return named, f"no trainer's own keys; {named_why}"
    why = ("inferred from " + ", ".join(sorted(keys & SFT_KEYS))) if keys & SFT_KEYS else \
        "no preference-training keys; TRL configs do not name their trainer (pass --dialect trl_dpo etc.)"
    return "sft", why


def build(cfg: LoadedConfig, variant: str | None = None, pins: Pins | None = None) -> DialectResult:
    """Canonical settings of a TRL config; keys judged against *pins* (default: the files beside the config)."""
    b = Builder(cfg)
    history = KeyHistory.load()
    pins = pins if pins is not None else \
        with_companions(with_recipe_layer(pins_beside(cfg.path), cfg.data, cfg.path), history)
    pins = with_trl_and_transformers(pins, history)
    data = cfg.data
    if variant in VARIANTS:
        trainer, why = variant, "given as the dialect"
    else:
        trainer, why = infer_trainer(data, cfg.path)
    b.default("trainer", trainer, why)
    b.first("model", ["model_name_or_path"])
    b.first("datasets", ["dataset_name", "datasets"], lambda v: v if isinstance(v, list) else [v])
    b.stated("attn_implementation", "attn_implementation")
    # LoRA / quantization (ModelConfig)
    use_peft = as_bool(b.raw("use_peft")) is True
    if use_peft:
        b.stated("lora_r", "lora_r", as_number)
        b.stated("lora_alpha", "lora_alpha", as_number)
        b.stated("lora_dropout", "lora_dropout", as_number)
        b.stated("lora_targets", "lora_target_modules", split_list)
        b.default("lora_r", 16, "TRL ModelConfig lora_r=16 (trl/trainer/model_config.py)")
        b.default("lora_alpha", 32, "TRL ModelConfig lora_alpha=32 (trl/trainer/model_config.py)")
    b.stated("load_in_4bit", "load_in_4bit", as_bool)
    b.stated("load_in_8bit", "load_in_8bit", as_bool)
    if use_peft:
        b.derived("adapter", "qlora" if b.value("load_in_4bit") is True else "lora", "use_peft")
    # lengths
    if trainer == "sft":
        b.first("max_seq_length", ["max_length", "max_seq_length"], as_number)
        b.default("max_seq_length", 1024, f"max_length=1024, {SOURCE_SFT}")
    else:
        b.stated("max_seq_length", "max_length", as_number)
        b.stated("max_prompt_length", "max_prompt_length", as_number)
        b.stated("max_completion_length", "max_completion_length", as_number)
        src = SOURCE_DPO if trainer == "dpo" else f"TRL {trainer.upper()}Config default"
        b.default("max_seq_length", 1024, f"max_length=1024, {src}")
        b.default("max_prompt_length", 512, f"max_prompt_length=512, {src}"
                  + (" (the old default TRL 0.28 keeps while deprecating the key)" if trainer == "dpo" else ""))
    # padding
    packing = as_bool(b.raw("packing")) is True
    padding_free = as_bool(b.raw("padding_free")) is True
    if trainer == "sft" and packing:
        b.derived("padding", "packed", "packing")
    elif padding_free:
        b.derived("padding", "padding_free", "padding_free")
    b.default("padding", "longest", "TRL's collators pad each batch to its longest sequence "
                                    "(DataCollatorForLanguageModeling / DataCollatorForPreference)")
    b.stated("pad_to_multiple_of", "pad_to_multiple_of", as_number)
    b.default("overflow", "truncate", "TRL truncates sequences longer than max_length "
                                      "(SFT from the right; DPO per truncation_mode)")
    if as_bool(b.raw("shuffle_dataset")) is False:
        b.derived("shuffle", False, "shuffle_dataset")
    # TRL's own defaults go first: hf's defaults never replace a setting already there
    b.default("gradient_checkpointing", True,
              "every TRL config sets gradient_checkpointing=True (trl/trainer/sft_config.py, dpo_config.py)")
    b.default("precision", "fp16" if as_bool(b.raw("fp16")) is True else "bf16",
              "TRL configs set bf16 = not fp16 in __post_init__ (trl/trainer/sft_config.py)")
    b.default("learning_rate", 2e-5 if trainer == "sft" else 1e-6,
              SOURCE_SFT if trainer == "sft" else SOURCE_DPO)
    if trainer in ("ppo", "rloo"):  # OnPolicyConfig: total_episodes, when set, not the epochs, is the run's length
        b.stated("total_episodes", "total_episodes", as_number)  # (ppo_trainer.py)
    hf.apply_training_arguments(b, source=SOURCE_SFT if trainer == "sft" else SOURCE_DPO)
    b.diagnostics.extend(hf.warmup_steps_refused(cfg, pins, history))
    b.diagnostics.extend(hf.warmup_ratio_overridden(cfg, pins, history))
    b.diagnostics.extend(refused_save_schedules(cfg, pins, history))
    b.diagnostics.extend(scheduler_kwargs_problems(cfg, pins, history))
    b.diagnostics.extend(report_to_null(cfg, pins, history))
    b.diagnostics.extend(resume_needs_checkpoint(cfg, "trl"))
    b.diagnostics.extend(names_the_release_lacks(cfg, pins, history))
    b.diagnostics.extend(checkpointing_twice(cfg, pins, history, fsdp_on=b.value("fsdp") is not None))
    b.diagnostics.extend(warmup_unread(cfg))
    if trainer == "grpo":
        b.diagnostics.extend(generation_batch_refused(cfg, pins, history))
    b.diagnostics.extend(server_settings_unread(cfg, trainer, pins, history))
    b.diagnostics.extend(numbers_read_as_text(cfg, trlparser_assumed=True))
    if trainer == "kto" and as_bool(b.raw("use_liger_loss")) is True:
        b.derived("fused_loss", "liger", "use_liger_loss")
    b.default("framework_versions", describe_versions(PACKAGES, pins, history),
              "the trl/transformers versions keys were judged against (seqprof.config.versions)")
    removal = removal_judge(trainer, pins, history)
    found = check_keys(cfg, keyspace(trainer, history), dialect_label=LABEL, scripts_read_extra=True,
                       removal=removal, arrival=arrival_judge(trainer, pins, history),
                       assumption=assumed(PACKAGES, pins, history), refuses_removed=True)
    releases = history.allowed("trl", pins) or [history.versions("trl")[-1]]  # unpinned: a fresh install's
    keys = [k for k in cfg.data if isinstance(k, str)]
    fate = own_parser_fate(cfg.path, keys) or leftovers_fate(cfg.path, keys, releases) \
        or unknown_key_fate(sorted(releases, key=Version))
    found += premature_keys(cfg, trainer, pins, history, {d.key for d in found}, fate)
    fields = project_fields(cfg.path) if found else {}
    found = _kept_by_trl_copy(found, fields)
    found = read_by_project(found, fields, "TRL", cfg.path, cfg.data) if found else found
    found = renamed_by_project(found, cfg.path) if found else found
    found = hf.without_moot_ratio_upgrade(found, b.diagnostics, fields)
    if fields:  # a field of the project's own that its code hands on to TRL's classes is judged there
        from seqprof.config.dialects.forwarded import handed_on_by_project

        found = handed_on_by_project(found, cfg, fields, pins)
    if found:  # keys the project's classes inherit from an installed alignment-handbook are not in its files
        found = read_by_own_classes(found, cfg.path, pins, history,
                                    frozenset(k for k in cfg.data if isinstance(k, str)))
    found = _own_model_arguments(found, cfg.data, cfg.path)
    found = [replace(d, kind="unread_key", suggestion=None, message=f"'{d.key}' is not a TRL field; {RECIPES}.")
             if d.kind == "unknown_key" and d.key in RECIPE_KEYS else d for d in found]
    found = undeclared_by_parser(found, cfg, CONFIG_CLASSES.get(trainer, "SFTConfig"), pins, history)
    found += missing_import_diagnostics(cfg, pins, history, trainer)
    found = _dead_and_dropped(found, fate, removal, cfg.path)
    b.diagnostics.extend(replace(d, message=_if_nothing_reads_it(d.message, fate))
                         if d.kind == "unread_key" and d.message.startswith(f"'{d.key}' is not a") else d for d in found)
    return b.result()
