"""axolotl YAML (``axolotl train config.yml``).

Keys: axolotl's pydantic schema (src/axolotl/utils/schemas/: AxolotlInputConfig and its
mixins), its bundled plugins' arguments, and the plugin keys its own examples use (committed
list, keys/axolotl.json), plus every schema field of the newest release in keys/key_history.json
(scripts/gen_key_history.py reads each minor release's schema from its wheel or sdist). axolotl
ignores keys it does not know (pydantic's default), so a misspelled key silently does nothing:
that is what unknown-key diagnostics catch here. A key an older release's schema had and the
newest lacks (relora_steps, gone in 0.12; the unsloth_* switches, gone in 0.17) is judged by the
axolotl version the project pins (seqprof.config.versions): SP408 when every pinned release lacks
it, a warning when a pinned one still has it, the assumed release named when nothing pins axolotl.

Defaults (schemas/config.py, training.py, peft.py):
- sequence_len 512; micro_batch_size 1; gradient_accumulation_steps 1; num_epochs 1.0;
  optimizer adamw_torch_fused; learning rate has no default (required);
- sample_packing off (None); pad_to_sequence_len off unless sample_packing; without packing
  each batch is padded to its longest row;
- excess_length_strategy 'drop': rows longer than sequence_len are dropped;
- gradient_checkpointing False; load_in_4bit/8bit False; bf16 'auto' (bf16 on Ampere+);
- saving: "leave save_steps empty to save at each epoch" (schema description), so with no
  save_steps/saves_per_epoch/save_strategy a checkpoint is written once per epoch.

Deprecations reported with their replacement, from the schema's own ``deprecated=`` notes and
schemas/deprecated.py: the boolean attention flags (flash_attention, sdp_attention, ...) ->
attn_implementation; fsdp -> fsdp_config; sequence_parallel_degree -> context_parallel_size;
dataset_processes -> dataset_num_proc; dpo_beta -> rl_beta; evaluation_strategy ->
eval_strategy; noisy_embedding_alpha -> neftune_noise_alpha; and options removed outright.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    Moved,
    as_bool,
    as_number,
    check_keys,
    did_you_mean,
    link_deepspeed,
    load_keys_file,
    nearest,
    positive_or_missing,
    split_list,
)
from seqprof.config.dialects.constant_warmup import warmup_unread
from seqprof.config.dialects.enum_values import AXOLOTL_OWN, axolotl_optimizer_refused
from seqprof.config.dialects.fsdp_checkpointing import checkpointing_twice
from seqprof.config.dialects.trainer_deepspeed import Stated, replaced_by_deepspeed
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import framework_fork, read_by_own_copy, read_by_project_code
from seqprof.config.key_history import KeyHistory, assumed, describe_versions, minor
from seqprof.config.pins import Pins
from seqprof.config.versions import pins_beside

NAME = "axolotl"
USES_PINS = True  # read_plan hands build() the version pins (--versions, else the files beside the config)
PACKAGES = ("axolotl",)
SCHEMA_CLASSES = ("AxolotlInputConfig",)  # the class keys/key_history.json records axolotl's schema under
LABEL = "axolotl"
SCHEMA = "axolotl schema default (src/axolotl/utils/schemas/{})"

_ATTN = "deprecated in axolotl's schema from 0.17 (config.py)"
RENAMED: Mapping[str, Moved] = {
    "flash_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: flash_attention_2"),
    "sdp_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: sdpa"),
    "xformers_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: xformers"),
    "flex_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: flex_attention"),
    "sage_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: sage"),
    "eager_attention": Moved("attn_implementation", f"{_ATTN}: use attn_implementation: eager"),
    "sequence_parallel_degree": Moved("context_parallel_size", "deprecated in axolotl's schema (config.py)"),
    "dataset_processes": Moved("dataset_num_proc", "deprecated in axolotl's schema and still read: a validator "
                                                   "copies it into dataset_num_proc with a warning (schemas/config.py "
                                                   "default_dataset_num_proc, 0.19)"),
    "pretrain_multipack_buffer_size": Moved("streaming_multipack_buffer_size",
                                            "deprecated since axolotl 0.13 and still read: a validator copies it "
                                            "into streaming_multipack_buffer_size with a warning (schemas/"
                                            "validation.py check_multipack_buffer_size, 0.19)"),
    "evaluation_strategy": Moved("eval_strategy", "deprecated (schemas/deprecated.py)"),
    "dpo_beta": Moved("rl_beta", "deprecated (schemas/deprecated.py)"),
    "noisy_embedding_alpha": Moved("neftune_noise_alpha", "deprecated (schemas/deprecated.py)"),
}
DEPRECATED: Mapping[str, Moved] = {
    "fsdp": Moved("fsdp_config", "configuring FSDP with the `fsdp` list is deprecated (config.py)"),
    "fsdp_final_state_dict_type": Moved("fsdp_config", "deprecated: set fsdp_config.final_state_dict_type"),
    "s2_attention": Moved(None, "shifted-sparse attention is no longer supported (schemas/deprecated.py)"),
    "flash_attn_rms_norm": Moved(None, "no longer supported (schemas/deprecated.py)"),
    "max_packed_sequence_len": Moved("sample_packing", "no longer supported (schemas/deprecated.py)"),
    "rope_scaling": Moved("model_config", "no longer supported at top level; put it under model_config"),
    "eval_table_size": Moved("generate_samples", "superseded by generate_samples (schemas/deprecated.py)"),
    "eval_max_new_tokens": Moved("generation_max_new_tokens", "superseded (schemas/deprecated.py)"),
    "dpo_use_logits_to_keep": Moved(None, "removed in TRL >= 0.29 (schemas/deprecated.py)"),
    "dpo_generate_during_eval": Moved(None, "removed in TRL >= 0.29 (schemas/deprecated.py)"),
    "dpo_norm_loss": Moved(None, "no longer supported with TRL >= 0.29 (schemas/deprecated.py)"),
    "liger_swiglu": Moved("liger_glu_activation", "a deprecated alias, still read, to be removed (integrations/"
                                                  "liger/args.py LigerArgs.check_deprecated_swiglu)"),
    "rpo_alpha": Moved("dpo_loss_type", "deprecated in TRL >= 0.29 (schemas/deprecated.py)"),
    # only `false` is refused: True is the default (schemas/model.py validate_save_safetensors; see _only_false)
    "save_safetensors": Moved(None, "false is refused: transformers 5 always saves safetensors (schemas/model.py "
                                    "validate_save_safetensors); drop the key"),
    "gptq_groupsize": Moved("gptq", "not in axolotl's current schema (read only by its old GPTQ loader); ignored"),
    "gptq_model_v1": Moved("gptq", "not in axolotl's current schema (read only by its old GPTQ loader); ignored"),
    "sample_packing_seq_len_multiplier": Moved(None, "not in axolotl's current schema; ignored"),
}

# legacy boolean attention flag -> attn_implementation value, in the priority order axolotl applies when several
# are on (schemas/enums.py LEGACY_ATTN_FLAG_TO_IMPL, read by config.py normalize_attn_implementation, v0.18.0);
# s2_attention is no longer supported at all (schemas/deprecated.py), so it maps to nothing
ATTN_FLAGS_DEPRECATED_FROM = "0.17.0"  # the release whose schema marks every flag below deprecated=
LEGACY_ATTN = (("xformers_attention", "xformers"), ("sage_attention", "sage"), ("flex_attention", "flex_attention"),
               ("flash_attention", "flash_attention_2"), ("sdp_attention", "sdpa"), ("eager_attention", "eager"))

STRONG = frozenset({"base_model", "sequence_len", "sample_packing", "lora_target_linear", "dataset_prepared_path",
                    "val_set_size", "saves_per_epoch", "evals_per_epoch", "pad_to_sequence_len", "lora_model_dir",
                    "base_model_config", "tokenizer_type", "eval_sample_packing", "lr_scheduler", "rl",
                    "excess_length_strategy", "wandb_watch", "wandb_log_model", "special_tokens",
                    "loss_watchdog_threshold", "flash_attention", "gradient_checkpointing_kwargs"})
WEAK = frozenset({"micro_batch_size", "num_epochs", "adapter", "datasets", "optimizer", "plugins", "lora_r",
                  "lora_alpha", "lora_dropout", "lora_target_modules", "load_in_4bit", "load_in_8bit",
                  "output_dir", "warmup_ratio", "learning_rate", "gradient_accumulation_steps", "bf16", "tf32"})


@cache
def keyspace() -> Keyspace:
    """The committed key list and the newest release's schema; fields only older releases had are removals
    (a Moved each, judged against the pins by removal_judge)."""
    data = load_keys_file("axolotl")
    history = KeyHistory.load()
    newest = history.fields_in("axolotl", history.newest("axolotl"), SCHEMA_CLASSES)
    older = history.ever("axolotl", SCHEMA_CLASSES) - newest - frozenset(RENAMED) - frozenset(DEPRECATED)
    removed = {k: Moved(None, "a field of axolotl's schema (AxolotlInputConfig) in earlier releases")
               for k in sorted(older)}
    known = frozenset(data["schema_and_plugins"]) | frozenset(data["from_examples"]) | newest
    return Keyspace(known=known - frozenset(RENAMED) - frozenset(DEPRECATED) - frozenset(removed),
                    renamed=RENAMED, deprecated={**removed, **DEPRECATED})


def removal_judge(pins: Pins, history: KeyHistory):
    """key -> Removal under *pins* (seqprof.config.versions), from the history of axolotl's schema."""
    return lambda key: history.removal("axolotl", key, SCHEMA_CLASSES, pins)


def detect(data: Mapping[str, Any]) -> int:
    """axolotl requires base_model (schemas/model.py ModelInputConfig.base_model has no default), so a file without it
    is another tool's, however many axolotl-like keys it shares (sample_packing, sequence_len); so is one whose keys
    axolotl mostly does not know (a Hydra config that merely sets gradient_accumulation_steps), or one with several
    keys it does not know and no data, which axolotl also requires (validation.py check_dataset_or_pretraining_dataset,
    0.5 on): a project's own `base_model:` + `train_data:` schema. (A config without data and with axolotl's own keys
    stays axolotl's: seqprof is often given the data with --data; so does a template whose `datasets:` is left empty
    for the project's code to fill, G.O.D's per-model templates.)"""
    if "base_model" not in data:
        return 0
    strong = sum(3 for k in data if k in STRONG)
    if not strong:
        return 0
    space = keyspace()
    foreign = sum(1 for k in data if k not in space.known and k not in space.renamed and k not in space.deprecated)
    no_data = "datasets" not in data and "pretraining_dataset" not in data
    if foreign >= 3 and (2 * foreign > len(data) or no_data):
        return 0
    if foreign >= 2 and 2 * foreign >= len(data):  # riyaaap's base_model, output_dir, lora:, training: (its
        return 0  # script's yaml.safe_load reads the two sections): half the file unknown to axolotl
    return strong + sum(1 for k in data if k in WEAK)


FRAGMENT_KEYS = 5  # keys only axolotl has that a file without base_model must set to be read as its fragment
FRAGMENT = "an axolotl fragment"  # how the reading of such a file begins (Plan.fragment)


def project_fragment(config_path: str, data: Mapping[str, Any]) -> str:
    """Why a file without base_model is an axolotl config fragment that the project merges into a full config
    (2son1a/mashup-learning's configs/train/lora_default.yaml, OmegaConf-merged with a model file and run through
    axolotl.cli.main.train; diwop's config/base.yml): five or more keys only axolotl has, at most one it does not
    know, and a project that installs axolotl or keeps axolotl configs beside it; '' otherwise."""
    if "base_model" in data or not Path(config_path).is_file():
        return ""
    own = [k for k in data if k in STRONG]
    space = keyspace()
    foreign = [k for k in data if k not in space.known and k not in space.renamed and k not in space.deprecated]
    if len(own) < FRAGMENT_KEYS or len(foreign) > 1:
        return ""
    from seqprof.config.versions import pins_beside

    pins = pins_beside(config_path)
    if pins.pins.get("axolotl"):
        where = f"in a project that installs axolotl ({pins.describe('axolotl')})"
    else:
        beside = _axolotl_config_beside(Path(config_path))
        if not beside:
            return ""
        where = f"beside axolotl configs ({beside})"
    return (f"{FRAGMENT} (its keys {', '.join(own[:4])}, and no base_model: the config it is merged into names the "
            f"model), {where}")


def _axolotl_config_beside(path: Path) -> str:
    """The name of a YAML file in the same folder that is an axolotl config by its keys (diwop's config/
    train-gemma4.yml beside the base.yml its train.py merges under it); '' when none is."""
    import yaml

    for other in sorted(path.parent.glob("*.y*ml")):
        if other == path or not other.is_file() or other.stat().st_size > 1 << 20:
            continue
        try:
            data = yaml.safe_load(other.read_text(encoding="utf-8", errors="replace"))
        except yaml.YAMLError:
            continue
        if isinstance(data, Mapping) and detect(data):
            return other.name
    return ""


def _datasets(value: Any) -> Any:
    if not isinstance(value, list):
        return [value]
    return [d.get("path", d) if isinstance(d, Mapping) else d for d in value]


# the pydantic schema (config/models/input/v0_4_1, first released in 0.4.1) gives val_set_size its 0.0 default; before
# it an unset val_set_size was None, and the trainer builder's `val_set_size == 0` test (no eval set: eval_strategy
# "no") did not hold. Judged by minor release: pins that allow any 0.4 or older say nothing
PYDANTIC_SCHEMA_FROM = "0.5.0"

# axolotl's AxolotlInputConfig.deprecate_sharegpt_datasets raises on `type: sharegpt*` from 0.5 on (utils/schemas/
# validation.py in 0.19.0; config/models/input/v0_4_1 in 0.5.2, the oldest release the key history holds)
SHAREGPT_REFUSED_FROM = "0.5.0"

# deprecated fields whose validator raises DeprecationWarning, so axolotl refuses to start (schemas/deprecated.py
# DeprecatedParameters; config/models/input/v0_4_1 before 0.9): key -> (first release that raises, whether any
# value but None raises or only a truthy one, axolotl's own words). Read from each release's wheel or sdist: the
# two oldest raise in every release the key history holds (0.5.2 on), the dpo ones from the TRL 0.29 migration
# (0.15.0; 0.16.1 is the oldest 0.16 release read), s2_attention and flash_attn_rms_norm from 0.17.0.
REFUSED_DEPRECATIONS: Mapping[str, tuple[str, str, str]] = {
    "max_packed_sequence_len": ("0.5.0", "truthy", "`max_packed_sequence_len` is no longer supported; use "
                                                   "sample_packing"),
    "rope_scaling": ("0.5.0", "truthy", "`rope_scaling` is no longer supported, it should now be a key under "
                                        "`model_config`"),
    "dpo_use_logits_to_keep": ("0.15.0", "set", "`dpo_use_logits_to_keep` is no longer supported, it has been "
                                                "removed in TRL >= 0.29.0"),
    "dpo_generate_during_eval": ("0.15.0", "set", "`dpo_generate_during_eval` is no longer supported, it has been "
                                                  "removed in TRL >= 0.29.0"),
    "dpo_norm_loss": ("0.16.0", "set", "`dpo_norm_loss` is no longer supported, due to breaking changes in TRL >= "
                                       "0.29.0"),
    "rpo_alpha": ("0.16.0", "set", "`rpo_alpha` has been deprecated in TRL >= 0.29.0, and now requires passing "
                                   "multiple loss types, which is not yet supported by Axolotl"),
    "s2_attention": ("0.17.0", "truthy", "`s2_attention` (shifted-sparse attention) is no longer supported"),
    "flash_attn_rms_norm": ("0.17.0", "truthy", "`flash_attn_rms_norm` is no longer supported"),
}


def _quantized_base(cfg: LoadedConfig) -> bool:
    """Whether the base model is a checkpoint saved quantized (unsloth's -bnb-4bit, a GPTQ or AWQ export, `gptq:
    true`), or a path seqprof cannot see into: axolotl then loads the quantization its config carries."""
    model = cfg.data.get("base_model")
    if as_bool(cfg.data.get("gptq")) is True or not isinstance(model, str):
        return True
    return bool(PRE_QUANTIZED.search(model)) or model.startswith(("/", ".", "~")) or model.count("/") != 1


def _judged_releases(pins: Pins, history: KeyHistory) -> list[str] | None:
    """The axolotl releases a value check judges by: those the pins allow, the newest when unpinned; None for a
    commit pin, which seqprof cannot place among releases."""
    allowed = history.allowed("axolotl", pins)
    if allowed is None:
        commit = pins.vcs("axolotl")  # the main branch (an image's main-latest) is past the newest release
        return None if commit is not None and not commit.head else [history.newest("axolotl")]
    return allowed


# normalize_attn_implementation raises on a legacy attention flag beside attn_implementation from 0.17.0; 0.12-0.16
# read the two as independent fields (Baseten's gpt-oss-120b config on a 2025-08 nightly sets both, as axolotl's own
# example of that day did)
LEGACY_ATTN_REFUSED_FROM = "0.17.0"

# check_eval_packing refuses eval_table_size with sample packing unless eval_sample_packing is false, in every
# release the key history holds (0.5.2 on); an axolotl of 2023 (rohanbalkondekar's 0.3.0 fork) had no such check
EVAL_PACKING_REFUSED_FROM = "0.5.0"

# ModelLoader._set_quantization_config builds a 4-bit BitsAndBytesConfig only for `adapter: qlora`, and for lora only
# an 8-bit one; 0.5.2-0.12.2 also passed load_in_4bit to from_pretrained, which transformers 4.x turned into a 4-bit
# load, and 0.13.1 stopped (loaders/model.py: no model_kwargs["load_in_4bit"] from 0.13.1 on; 0.13.0 was never
# published). A base model that is already quantized (its config carries quantization_config) loads as it was saved.
LORA_4BIT_DROPPED_FROM = "0.13.0"
PRE_QUANTIZED = re.compile(r"bnb|4bit|4-bit|int4|nf4|gptq|awq|exl2|quantized", re.IGNORECASE)

# resume_from_checkpoint is `str | None` in every pydantic schema (config/models/input/v0_4_1 in 0.5.2, schemas/
# config.py since 0.8): pydantic v2 does not turn a bool into a str, so `resume_from_checkpoint: true` is refused
# ("Input should be a valid string"); auto_resume_from_checkpoints is the switch
RESUME_PATH_ONLY_FROM = PYDANTIC_SCHEMA_FROM

# check_causal_lm_evals: eval_causal_lm_metrics must be a list of SUPPORTED_METRICS, the same five in every release
# with the pydantic schema (config/models/input/v0_4_1 in 0.5.2, schemas/config.py in 0.8, validation.py since 0.12)
CAUSAL_LM_METRICS = ("sacrebleu", "comet", "ter", "chrf", "perplexity")

# TrainingValidationMixin.check_batch_size_fields (utils/schemas/validation.py; config/models/input/v0_4_1 before
# 0.8): 0.5.2-0.18.0 refuse a config with fewer than two of micro_batch_size, gradient_accumulation_steps and
# batch_size set; 0.19.0 refuses only batch_size alone (the schema defaults the other two to 1).
# check_gas_bsz refuses gradient_accumulation_steps with batch_size in every release the history holds.
TOO_FEW_BATCH_KEYS_TAKEN_FROM = "0.19.0"


def _batch_size_refusal(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> dict[str, str] | None:
    """Which of axolotl's batch-key checks refuses the config at the release pip installs (the newest the pins
    allow; the newest release unpinned), and that release; None when none does or a commit pin cannot be placed."""
    from packaging.version import Version

    given = [k for k in ("micro_batch_size", "gradient_accumulation_steps", "batch_size") if cfg.data.get(k)]
    if "gradient_accumulation_steps" in given and "batch_size" in given:
        kind = "both"
    elif len(given) >= 2:
        return None
    else:
        kind = "too_few"
    releases = _judged_releases(pins, history)
    if releases is None:
        return None
    # a checkout's own old version, else (a pin no release meets, axolotl==1.1.4) what a fresh install gets
    releases = releases or _releases_run(pins, history) or [history.newest("axolotl")]
    installed = max(releases, key=Version)
    where = (f"no axolotl pin found: {installed} assumed" if not pins.of("axolotl") else
             f"{pins.describe('axolotl')} installs {installed}" if history.allowed("axolotl", pins) else
             f"{pins.describe('axolotl')} matches no release: {installed}, the newest, assumed")
    if kind == "too_few" and Version(installed) >= Version(TOO_FEW_BATCH_KEYS_TAKEN_FROM) and given != ["batch_size"]:
        return None
    return {"kind": kind, "release": installed, "where": where,
            "taken_later": kind == "too_few" and Version(installed) < Version(TOO_FEW_BATCH_KEYS_TAKEN_FROM)}


def _values_the_schema_refuses(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A `chat_template:` or `rl:` string that no axolotl release the pins allow has among the members of the Enum
    the field is typed by (keys/key_history.json "values"): pydantic refuses the config before training
    (`chat_template: qwen2_5` for ChatTemplate.qwen_25). A commit pin, a fork, or pins before the history say
    nothing; chat_template's `tokenizer_default_fallback_*` strings are taken by pattern. `optimizer:` is judged
    against the release's own names and the transformers it pins (enum_values.axolotl_optimizer_refused)."""
    allowed = _judged_releases(pins, history)
    if not allowed or framework_fork(cfg.path) is not None:
        return []
    order = history.versions("axolotl")
    out = axolotl_optimizer_refused(cfg, allowed, history, pins)  # optimizer: axolotl's own names or transformers'
    for key, spans in history.data["axolotl"].get("values", {}).items():
        if key in (DATASET_TYPE, AXOLOTL_OWN):  # _dataset_types_unhandled; the optimizer above
            continue
        value = cfg.data.get(key)
        if not isinstance(value, str) or key == "chat_template" and value.startswith("tokenizer_default_fallback_"):
            continue
        if history.having("axolotl", value, [key], table="values") & set(allowed):
            continue
        newest = max(allowed, key=order.index)
        choices = sorted(v for v in spans["fields"] if newest in history.having("axolotl", v, [key], table="values"))
        near = nearest(value, choices)
        guess = near[0] if len(near) == 1 else None
        hint = f"; did you mean {guess!r}?" if guess else \
            f"; did you mean {' or '.join(map(repr, near))}?" if near else ""
        where = f"axolotl {history.release('axolotl', newest).split()[-1]}"
        out.append(ConfigDiagnostic(
            kind="invalid_value", key=key, file=cfg.path, line=cfg.line(key) or 1,
            message=f"'{key}: {value}' is not a value {where} takes ({key} is typed by an Enum of "
                    f"{len(choices)} values{': ' + ', '.join(choices) if len(choices) <= 12 else ''}; "
                    f"{'' if pins.of('axolotl') else 'no axolotl pin found, the newest assumed; '}its schema "
                    f"refuses the config before training){hint}",
            suggestion=f"{key}: {guess}" if guess else None))
    return out


def _dataset_chat_templates_unknown(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A `datasets:` entry's `chat_template:` that names no template the release has: the dataset schema types it
    `ChatTemplate | str`, so pydantic passes any string, and data loading then stops in get_chat_template with
    "Template '...' not found" (utils/chat_templates). Most often the Jinja text itself (kurniarahmattt/
    fine-tune-pentagi), which goes in chat_template_jinja beside `chat_template: jinja`. An `rl:` config, a fork,
    a commit pin and the `tokenizer_default_fallback_*` names are not judged."""
    if cfg.data.get("rl") or framework_fork(cfg.path) is not None:
        return []
    allowed = _judged_releases(pins, history)
    if not allowed:
        return []
    where = _release_said(max(allowed, key=history.versions("axolotl").index), pins, history)
    out = []
    for key, index, entry in _dataset_entries(cfg):
        name = entry.get("chat_template")
        if not isinstance(name, str) or not name or name.startswith("tokenizer_default_fallback_") \
                or history.having("axolotl", name, ["chat_template"], table="values") & set(allowed):
            continue
        jinja = "{%" in name or "{{" in name
        dotted = f"{key}.{index}.chat_template"
        said = "a Jinja template" if jinja else f"'{name}'"
        out.append(ConfigDiagnostic(
            kind="invalid_value", key=dotted, file=cfg.path, line=cfg.line(dotted) or cfg.line(key) or 1,
            message=f"{key}[{index}].chat_template is {said}, but {where} reads it as the name of a template "
                    "and has none of that name, so data loading stops with \"Template '...' not found\" "
                    "(utils/chat_templates get_chat_template)"
                    + ("; put the template in chat_template_jinja and set chat_template: jinja" if jinja else ""),
            suggestion=f"{dotted}: jinja' and move the template to '{key}.{index}.chat_template_jinja"
            if jinja else None))
    return out


LEGACY_MESSAGE_FIELDS_FROM = "0.7.0"  # handle_legacy_message_fields_logic, v0_4_1/__init__.py then schemas/utils.py
LEGACY_MESSAGE_FIELDS = {"message_field_role": "role", "message_field_content": "content"}


def _legacy_message_fields(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A dataset entry's `message_field_role:` / `message_field_content:`: from 0.7 SFTDataset's before-validator
    moves them into message_property_mappings with a "deprecated" warning (still read, so a deprecation). DPO and
    KTO entries are other models (utils/config/__init__.py validate_config). Judged at the release pip installs,
    as the other deprecations are (sfncore/lora-forge's axolotl>=0.5.0 gets 0.19); a fork or a commit claims
    nothing."""
    from packaging.version import Version

    release = _schema_release(cfg, pins, history)
    if release is None or Version(release[0]) < Version(LEGACY_MESSAGE_FIELDS_FROM):
        return []
    if str(cfg.get("rl") or "").lower() in ("dpo", "ipo", "simpo", "kto"):
        return []
    out = []
    for key, index, entry in _dataset_entries(cfg):
        mapped = entry.get("message_property_mappings")
        mapped = mapped if isinstance(mapped, Mapping) else {}
        for legacy, prop in LEGACY_MESSAGE_FIELDS.items():
            value = entry.get(legacy)
            if not isinstance(value, str) or prop in mapped and mapped[prop] != value:
                continue  # a clash is a ValueError ("Conflicting message ... fields"), not a deprecation
            dotted = f"{key}.{index}.{legacy}"
            # the same mapping given both ways still logs the warning, and the legacy field adds nothing
            said = f"; message_property_mappings already maps {prop} to '{value}', so it adds nothing" \
                if prop in mapped else ""
            out.append(ConfigDiagnostic(
                kind="deprecated_key", key=dotted, file=cfg.path, line=cfg.line(dotted) or cfg.line(key) or 1,
                message=f"'{dotted}' is deprecated from axolotl {minor(LEGACY_MESSAGE_FIELDS_FROM)}: the dataset "
                        f"schema moves it into message_property_mappings and logs \"{legacy} is deprecated, use "
                        f"message_property_mappings instead\" (utils/schemas/utils.py "
                        f"handle_legacy_message_fields_logic){said}; {release[1]}",
                suggestion=None if said else f"{key}.{index}.message_property_mappings: {{{prop}: {value}}}"))
    return out


def _dataset_entries(cfg: LoadedConfig):
    """(section, index, entry) of every mapping under `datasets:` and `test_datasets:`."""
    for key in ("datasets", "test_datasets"):
        entries = cfg.data.get(key)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, Mapping):
                yield key, index, entry


def _release_said(newest: str, pins: Pins, history: KeyHistory) -> str:
    """'axolotl 0.19', saying when no pin chose it."""
    return f"axolotl {history.release('axolotl', newest).split()[-1]}" + (
        "" if pins.of("axolotl") else " (no axolotl pin found, the newest assumed)")


DATASET_TYPE = "datasets.type"  # key_history.json "values": the bare `type:` words each release handles


def _compared_in_project(config_path: str, kind: str) -> bool:
    """Whether the project's code tests a dataset's type against *kind* (PhungVanDuy/openchai's finetune.py:
    `if item["type"] == "chatml" or item["type"] == "input_output":` routes those entries to its own loader)."""
    from seqprof.config.project_fields import code_matches, project_root

    if not Path(config_path).is_file():
        return False
    test = re.compile(r"""\[\s*["']type["']\s*\]\s*(?:==|!=|in)\s*[^\n]*["']""" + re.escape(kind) + r"""["']|"""
                      r"""["']""" + re.escape(kind) + r"""["']\s*(?:==|!=)\s*\w+\s*\[\s*["']type["']""")
    return code_matches(project_root(config_path), test)


def _dataset_types_unhandled(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A `datasets:` / `test_datasets:` entry whose `type:` is a bare word no axolotl release the pins allow handles
    (RamakrishnaReddyPalle's `type: chat`): load() finds no module axolotl.prompt_strategies.<type>, no base type
    handler takes it, and data loading stops with "unhandled prompt tokenization strategy" (utils/data/wrappers.py).
    A dotted type (a strategy's loader, or a module of the project's own), a `type: alpaca:chat` style, a mapping
    (user-defined), sharegpt (SP431), an `rl:` config (its own loaders), a fork, a commit pin, and a type the
    project ships a module of that name for (MangyMango's customgemma2.py, copied into prompt_strategies/): not
    judged."""
    from seqprof.config.project_fields import project_root, python_files

    if cfg.data.get("rl") or framework_fork(cfg.path) is not None:
        return []
    allowed = _judged_releases(pins, history)
    spans = history.data["axolotl"].get("values", {}).get(DATASET_TYPE)
    if not allowed or not spans:
        return []
    order = history.versions("axolotl")
    newest = max(allowed, key=order.index)
    shipped: set[str] | None = None  # the project's module names, read once an unknown type needs them
    out = []
    for key, index, entry in _dataset_entries(cfg):
        kind = entry.get("type")
        if not isinstance(kind, str) or not kind or any(c in kind for c in ".:/") or kind.startswith("sharegpt"):
            continue
        if history.having("axolotl", kind, [DATASET_TYPE], table="values") & set(allowed):
            continue
        if shipped is None:
            shipped = {f.stem for f in python_files(project_root(cfg.path))} if Path(cfg.path).is_file() else set()
        if kind in shipped or _compared_in_project(cfg.path, kind):
            continue
        choices = sorted(v for v in spans["fields"]
                         if newest in history.having("axolotl", v, [DATASET_TYPE], table="values"))
        near = nearest(kind, choices)
        guess = near[0] if len(near) == 1 else None
        where = _release_said(newest, pins, history)
        dotted = f"{key}.{index}.type"
        out.append(ConfigDiagnostic(
            kind="invalid_value", key=dotted, file=cfg.path, line=cfg.line(dotted) or cfg.line(key) or 1,
            message=f"'type: {kind}' in {key}[{index}] is no dataset type {where} handles: there is no "
                    f"prompt_strategies/{kind} module and no built-in base type of that name, so data loading "
                    "stops with \"unhandled prompt tokenization strategy\" (utils/data/wrappers.py)"
                    + (f"; did you mean {guess!r}?" if guess else ""),
            suggestion=f"type: {guess}" if guess else None))
    return out


def _sharegpt_types(datasets: Any) -> list[str]:
    """'datasets[0].type: sharegpt' for each entry whose type axolotl refuses."""
    if not isinstance(datasets, list):
        return []
    return [f"datasets[{i}].type: {d['type']}" for i, d in enumerate(datasets)
            if isinstance(d, Mapping) and isinstance(d.get("type"), str) and d["type"].startswith("sharegpt")]


def _allows_before(pins: Pins, package: str, version: str) -> bool:
    """Whether the pins on *package* allow a release older than *version* (unpinned: no, the newest is assumed; a
    commit seqprof cannot place among releases, RLHFlow's README checkout of axolotl 55cc214c: it may)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    commit = pins.vcs(package)
    if commit is not None and not commit.head:
        return True

    older = [f"0.{m}.{p}" for m in range(Version(version).minor) for p in range(0, 6)]
    for pin in pins.of(package):
        try:
            spec = SpecifierSet(pin.specifier)
        except InvalidSpecifier:
            return True  # cannot place it: claim nothing
        if any(_older(s.version, version) for s in spec if s.operator in ("==", "===")):
            return True  # a checkout's own 0.8.0.dev0, which no release equals
        if any(spec.contains(v, prereleases=True) for v in older):
            return True
    return False


def _older(pinned: str, version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(pinned) < Version(version)
    except InvalidVersion:  # `==0.4.*`, `===main`
        return False


def _all_of_type(datasets: Any, kind: str) -> bool:
    """Every entry of an axolotl `datasets` list has `type: <kind>` (`type: pretrain`: continued pre-training)."""
    return isinstance(datasets, list) and bool(datasets) and all(
        isinstance(d, Mapping) and d.get("type") == kind for d in datasets)


def _kd_plugin(plugins: Any) -> bool:
    """axolotl's knowledge-distillation plugin is loaded (`axolotl.integrations.kd.KDPlugin`): only it reads
    kd_trainer, and swaps in AxolotlKDTrainer."""
    return isinstance(plugins, list) and any(isinstance(p, str) and p.startswith("axolotl.integrations.kd")
                                             for p in plugins)


def build(cfg: LoadedConfig, variant: str | None = None, pins: Pins | None = None) -> DialectResult:
    """Canonical settings of an axolotl config; keys judged against *pins* (default: the files beside it)."""
    b = Builder(cfg)
    pins = pins if pins is not None else pins_beside(cfg.path)
    history = KeyHistory.load()
    b.stated("model", "base_model")
    b.stated("model_config_path", "base_model_config")
    # trainer kind
    if not b.stated("trainer", "rl", lambda v: str(v).lower()):
        if as_bool(b.raw("reward_model")) is True:
            b.derived("trainer", "reward", "reward_model")
        elif as_bool(b.raw("process_reward_model")) is True:
            b.derived("trainer", "prm", "process_reward_model")
        elif b.present("pretraining_dataset"):
            b.derived("trainer", "pretrain", "pretraining_dataset")
        elif _all_of_type(b.raw("datasets"), "pretrain"):  # prompt_strategies/pretrain.py: raw text, no prompt
            b.derived("trainer", "pretrain", "datasets")
        elif as_bool(b.raw("kd_trainer")) is True and _kd_plugin(b.raw("plugins")):
            b.derived("trainer", "distill", "kd_trainer")  # integrations/kd: KDPlugin.get_trainer_cls -> AxolotlKDTrainer
        b.default("trainer", "sft", "no rl key: axolotl runs supervised fine-tuning")
    # lengths and batches
    b.stated("max_seq_length", "sequence_len", as_number)
    b.default("max_seq_length", 512, SCHEMA.format("config.py: sequence_len=512"))
    b.stated("max_prompt_length", "max_prompt_len", as_number)
    b.stated("micro_batch_size", "micro_batch_size", as_number)
    b.default("micro_batch_size", 1, SCHEMA.format("training.py: micro_batch_size=1"))
    b.stated("gradient_accumulation_steps", "gradient_accumulation_steps", as_number)
    b.default("gradient_accumulation_steps", 1, SCHEMA.format("training.py"))
    b.stated("global_batch_size", "batch_size", as_number)
    b.stated("world_size", "world_size", as_number)
    b.stated("overflow", "excess_length_strategy")
    b.default("overflow", "drop", "excess_length_strategy defaults to 'drop': rows longer than sequence_len "
                                  "are removed (schemas/config.py)")
    # padding
    if as_bool(b.raw("sample_packing")) is True:
        b.derived("padding", "packed", "sample_packing")
    elif as_bool(b.raw("pad_to_sequence_len")) is True:
        b.derived("padding", "max_length", "pad_to_sequence_len")
    elif as_bool(b.raw("batch_flattening")) is True:
        b.derived("padding", "padding_free", "batch_flattening")
    b.default("padding", "longest", "sample_packing defaults to off and pad_to_sequence_len is off without it, "
                                    "so each batch is padded to its longest row (schemas/config.py)")
    b.stated("pad_to_multiple_of", "pad_to_multiple_of", as_number)
    b.stated("group_by_length", "group_by_length", as_bool)
    b.default("group_by_length", False, SCHEMA.format("training.py"))
    if as_bool(b.raw("curriculum_sampling")) is True:
        b.derived("shuffle", False, "curriculum_sampling")
    b.default("shuffle", True, "axolotl samples randomly unless curriculum_sampling is set")
    b.stated("gradient_checkpointing", "gradient_checkpointing", as_bool)
    b.default("gradient_checkpointing", False, SCHEMA.format("config.py"))
    # adapters and quantization
    b.stated("adapter", "adapter")
    b.stated("lora_r", "lora_r", as_number)
    b.stated("lora_alpha", "lora_alpha", as_number)
    b.stated("lora_dropout", "lora_dropout", as_number)
    if not b.stated("lora_targets", "lora_target_modules", split_list):
        if as_bool(b.raw("lora_target_linear")) is True:
            b.derived("lora_targets", ["all-linear"], "lora_target_linear")
    b.stated("load_in_4bit", "load_in_4bit", as_bool)
    b.stated("load_in_8bit", "load_in_8bit", as_bool)
    b.default("load_in_4bit", False, SCHEMA.format("peft.py"))
    b.default("load_in_8bit", False, SCHEMA.format("peft.py"))
    # precision
    for key, prec in (("bf16", "bf16"), ("bfloat16", "bf16"), ("fp16", "fp16"), ("float16", "fp16")):
        v = as_bool(b.raw(key))
        if v is True or (key == "bf16" and v in ("auto", "full")):
            b.derived("precision", prec, key)
            break
    b.default("precision", "bf16", "bf16 defaults to 'auto': bf16 on GPUs that support it (schemas/config.py)")
    # optimization and schedule
    b.stated("optimizer", "optimizer")
    b.default("optimizer", "adamw_torch_fused", SCHEMA.format("training.py"))
    b.stated("learning_rate", "learning_rate", as_number)
    b.stated("num_epochs", "num_epochs", as_number)
    b.default("num_epochs", 1.0, SCHEMA.format("training.py: num_epochs=1.0"))
    b.stated("max_steps", "max_steps", positive_or_missing)
    # checkpoints
    # axolotl tests these by truth (utils/config/__init__.py `if cfg.saves_per_epoch:`, core/builders/base.py
    # `if self.cfg.save_steps:`): a 0 is the key left unset, not an unusable value
    saving = [key for key in ("save_steps", "saves_per_epoch") if b.present(key) and not _zero(b.raw(key))]
    for key in saving:
        b.stated(key, key, as_number)
    b.stated("save_strategy", "save_strategy", lambda v: str(v).lower())
    if saving:
        b.derived("save_strategy", "steps", saving[0])
    b.default("save_strategy", "epoch", "with no save_steps or saves_per_epoch axolotl saves at each epoch "
                                        "(schema description of save_steps)")
    # attention and kernels
    if not b.stated("attn_implementation", "attn_implementation"):
        for key, impl in LEGACY_ATTN:
            if as_bool(b.raw(key)) is True:
                b.derived("attn_implementation", impl, key)
                break
    if as_bool(b.raw("chunked_cross_entropy")) is True:
        b.derived("fused_loss", "chunked", "chunked_cross_entropy")
    elif as_bool(b.raw("cut_cross_entropy")) is True:
        b.derived("fused_loss", "cut_cross_entropy", "cut_cross_entropy")
    else:
        for key in ("liger_fused_linear_cross_entropy", "liger_cross_entropy"):
            if as_bool(b.raw(key)) is True:
                b.derived("fused_loss", "liger", key)
                break
    # distribution
    deepspeed = link_deepspeed(b, "deepspeed")
    if deepspeed is not None:  # axolotl hands these on as lr_scheduler_type and optim
        run = Stated.from_config(cfg, {"lr_scheduler_type": "lr_scheduler", "optim": "optimizer"})
        b.diagnostics.extend(replaced_by_deepspeed(run, deepspeed, cfg))
    if b.present("fsdp_config") and b.raw("fsdp_config") != {}:
        b.stated("fsdp", "fsdp_config")
    elif b.present("fsdp") and b.raw("fsdp") not in ([], ""):
        b.stated("fsdp", "fsdp")
    b.stated("fsdp_version", "fsdp_version", as_number)
    b.first("context_parallel_size", ["context_parallel_size", "sequence_parallel_degree"], as_number)
    b.stated("tensor_parallel_size", "tensor_parallel_size", as_number)
    b.stated("datasets", "datasets", _datasets)
    b.stated("datasets", "pretraining_dataset", _datasets)
    b.diagnostics.extend(_values_the_schema_refuses(cfg, pins, history))
    b.diagnostics.extend(_dataset_types_unhandled(cfg, pins, history))
    b.diagnostics.extend(_dataset_chat_templates_unknown(cfg, pins, history))
    b.diagnostics.extend(_legacy_message_fields(cfg, pins, history))
    b.stated("val_set_size", "val_set_size", as_number)
    if not _allows_before(pins, "axolotl", PYDANTIC_SCHEMA_FROM):  # an unset one is 0.0 (SP446)
        b.default("val_set_size", 0.0, SCHEMA.format("config.py: val_set_size=0.0"))
    if b.raw("sample_packing") and b.raw("eval_table_size") and b.raw("eval_sample_packing") is not False and \
            not _allows_before(pins, "axolotl", EVAL_PACKING_REFUSED_FROM):
        b.derived("eval_table_with_packing_refused", True, "eval_table_size")
    if b.raw("attn_implementation") and any(as_bool(b.raw(k)) is True for k, _ in LEGACY_ATTN) and \
            not _allows_before(pins, "axolotl", LEGACY_ATTN_REFUSED_FROM):
        b.derived("legacy_attention_refused", True, "attn_implementation")
    if b.raw("adapter") == "lora" and as_bool(b.raw("load_in_4bit")) is True and not _quantized_base(cfg) and \
            not _allows_before(pins, "axolotl", LORA_4BIT_DROPPED_FROM):
        b.derived("lora_load_in_4bit_ignored", True, "load_in_4bit")
    if isinstance(b.raw("resume_from_checkpoint"), bool) and \
            not _allows_before(pins, "axolotl", RESUME_PATH_ONLY_FROM):
        b.derived("resume_flag_refused", True, "resume_from_checkpoint")
    metrics = b.raw("eval_causal_lm_metrics")
    if metrics and not _allows_before(pins, "axolotl", PYDANTIC_SCHEMA_FROM):
        unsupported = [m for m in metrics if m not in CAUSAL_LM_METRICS] if isinstance(metrics, list) else [metrics]
        if unsupported:
            b.derived("causal_lm_metrics_refused", unsupported, "eval_causal_lm_metrics")
    refusal = _batch_size_refusal(cfg, pins, history)
    if refusal is not None:
        b.derived("batch_size_refusal", refusal, "micro_batch_size")
    refused = _sharegpt_types(b.raw("datasets"))
    if refused and not _allows_before(pins, "axolotl", SHAREGPT_REFUSED_FROM):
        b.derived("sharegpt_datasets", refused, "datasets")
    b.diagnostics.extend(checkpointing_twice(cfg, pins, history, fsdp_on=b.value("fsdp") is not None, axolotl=True))
    b.diagnostics.extend(warmup_unread(cfg, "lr_scheduler"))
    b.default("framework_versions", describe_versions(PACKAGES, pins, history),
              "the axolotl version keys were judged against (seqprof.config.versions)")
    found = check_keys(cfg, keyspace(), dialect_label=LABEL, removal=removal_judge(pins, history),
                       arrival=lambda replacement, since=None: history.arrival("axolotl", replacement, SCHEMA_CLASSES,
                                                                               pins, since),
                       assumption=assumed(PACKAGES, pins, history))
    # pydantic drops a key the schema lacks; one left empty set nothing either (a template's leftover)
    found = [d for d in found if not (d.kind == "unknown_key" and cfg.has(d.key) and cfg.get(d.key) is None)]
    found = _attention_flag_fixes(_only_false(found, cfg), cfg, _releases_run(pins, history))
    found = _meant_keys(_special_tokens_home(found), cfg)
    found = _refused_deprecations(found, cfg, pins, history) + _fsdp_config_keys(cfg, pins, history) + \
        _section_keys(cfg, pins, history) + _dataset_entry_keys(cfg, pins, history)
    # a fork's own plugin arguments (pydantic models beside the config) are read by its axolotl
    found = read_by_own_copy(found, cfg.path, NAME, LABEL, older_copy=_older_copy_unstaged(cfg, pins, history))
    b.diagnostics.extend(read_by_project_code(found, cfg.path, LABEL))
    return b.result()


# SpecialTokensConfig (axolotl 0.19 utils/schemas/model.py): the tokens axolotl reads only under `special_tokens:`
SPECIAL_TOKENS = frozenset({"bos_token", "eos_token", "pad_token", "unk_token", "additional_special_tokens"})


def _special_tokens_home(diagnostics: list[ConfigDiagnostic]) -> list[ConfigDiagnostic]:
    """A top-level `eos_token:` is ignored, and its fix is to move it under special_tokens:, not the nearest name
    (eot_tokens, a different feature)."""
    return [replace(d, suggestion=f"special_tokens.{d.key}",
                    message=f"'{d.key}' is not a top-level key axolotl reads: SpecialTokensConfig reads it under "
                            "special_tokens: (utils/schemas/model.py)")
            if d.kind == "unknown_key" and d.key in SPECIAL_TOKENS else d for d in diagnostics]


# unknown keys whose nearest name is not what they mean: `tokenizer: Qwen/Qwen3-8B` is the tokenizer's repo, which
# axolotl reads from tokenizer_config (tokenizer_type names a transformers class: the typo fix would break the run)
MEANT = {"tokenizer": "tokenizer_config"}


# `torch_dtype: float16` (in some of axolotl's own examples too): no schema field, so validation drops it, and
# normalize_config sets cfg.torch_dtype from bf16 / fp16 (utils/config/__init__.py) whatever the file said
DTYPE_FLAGS = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16"}


def _meant_keys(diagnostics: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """An unknown key in MEANT suggests the key that takes its value when that value is a name or path (a string);
    otherwise nothing (anselmlong's `tokenizer:` mapping fits no axolotl key). An unknown `torch_dtype` says that
    axolotl derives the dtype from bf16 / fp16, and suggests the flag its value names."""
    out = []
    for d in diagnostics:
        if d.kind == "unknown_key" and d.key in MEANT:
            d = replace(d, suggestion=MEANT[d.key] if isinstance(cfg.get(d.key), str) else None)
        elif d.kind == "unknown_key" and d.key == "torch_dtype":
            flag = DTYPE_FLAGS.get(str(cfg.get("torch_dtype")).removeprefix("torch."))
            flag = None if flag and cfg.get(flag) is not None else flag  # the flag is set already: just remove
            d = replace(d, suggestion=f"{flag}: true" if flag else None, reason=(
                "axolotl's schema has no torch_dtype: validation drops it, and normalize_config sets the dtype from "
                "bf16 / fp16 (float32 when neither is set; utils/config/__init__.py)"))
        out.append(d)
    return out


def _only_false(diagnostics: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """`save_safetensors: true` (the default) is accepted; only false raises (schemas/model.py
    validate_save_safetensors, axolotl @ 067b021c8b87), so only false is reported."""
    return [d for d in diagnostics if d.key != "save_safetensors" or as_bool(cfg.get(d.key)) is False]


def _refused_deprecations(diagnostics: list[ConfigDiagnostic], cfg: LoadedConfig, pins: Pins,
                          history: KeyHistory) -> list[ConfigDiagnostic]:
    """A deprecated field whose validator raises is no warning: the release that raises refuses the config.

    An error (SP408) when the release a fresh install gets raises (the newest the pins allow; the newest known
    when nothing pins axolotl, as SP431 judges); a warning naming the release that starts raising when every
    pinned release still reads it; a commit pin cannot be placed, so it stays the deprecation it was."""
    from packaging.version import Version

    allowed = history.allowed("axolotl", pins) or None
    commit = pins.vcs("axolotl")
    if allowed is None and commit is not None and not commit.head:
        # whether that commit deprecates the key at all is unknown: a note (TrueFoundry's fork at 0.10.0.dev0 reads
        # flash_attn_rms_norm, Baseten's image of a 2025 main reads save_safetensors: false)
        return [replace(d, kind="upcoming_deprecation",
                        message=f"{d.message.split('; assuming axolotl')[0]}; axolotl is pinned to a commit "
                                f"({commit.source}), which seqprof cannot place among releases: check that commit "
                                "before changing it") if d.kind == "deprecated_key" else d for d in diagnostics]
    newest = max(allowed or [history.newest("axolotl")], key=Version)
    out = []
    for d in diagnostics:
        refused = REFUSED_DEPRECATIONS.get(d.key)
        value = cfg.get(d.key)
        if d.kind == "deprecated_key" and refused is not None and Version(newest) < Version(refused[0]) and \
                (refused[1] == "truthy" and (not value or as_bool(value) is False)):
            # Weatherman's `s2_attention: false` under axolotl==0.5.2: a live field there, deprecated from 0.17
            out.append(replace(d, kind="upcoming_deprecation",
                               message=f"'{d.key}' is dropped by a release after the pinned one: axolotl "
                                       f"{refused[0].rsplit('.', 1)[0]} moved it to schemas/deprecated.py; "
                                       f"{pins.describe('axolotl')} still reads it"))
            continue
        if d.kind != "deprecated_key" or refused is None or \
                (refused[1] == "truthy" and (not value or as_bool(value) is False)) or (refused[1] == "set" and value is None):
            out.append(d)
            continue
        since, _, words = refused
        raises = f"axolotl {since.rsplit('.', 1)[0]} and newer raise DeprecationWarning on it: \"{words}\" " \
                 "(schemas/deprecated.py)"
        if Version(newest) < Version(since):
            out.append(replace(d, message=f"{d.message}; {raises}: it breaks on that upgrade"))
            continue
        if allowed is None:
            how = _assumed_newest(pins, newest)
        elif all(Version(v) >= Version(since) for v in allowed):
            how = f"every release {pins.describe('axolotl')} allows raises"
        else:
            how = f"{pins.describe('axolotl')} allows it: pip installs {newest}, which raises (releases before " \
                  f"{since.rsplit('.', 1)[0]} read it)"
        out.append(replace(d, kind="removed_key", suggestion=None, value_change=None,
                           message=f"'{d.key}' is refused: {raises}; {how}"))
    return out


FSDP_PREFIX_DEPRECATED_FROM = "0.12.0"  # validation.py check_fsdp_config_kwargs_prefix first appears in 0.12.0
FSDP_MODEL_FROM = "0.13.0"  # utils/schemas/fsdp.py FSDPConfig validates fsdp_config (0.12: dict[str, Any])
FSDP_VERSION_KEYS = frozenset({"fsdp_version", "version"})  # moved to the top-level fsdp_version by a validator


def _fsdp_config_keys(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """fsdp_config's keys as the axolotl the pins allow reads them.

    From 0.12 axolotl logs that the `fsdp_` prefix inside fsdp_config is deprecated and strips it
    (utils/schemas/validation.py check_fsdp_config_kwargs_prefix); releases before 0.12 read the prefixed names, so
    under those pins the prefix is a note for the upgrade (SP429). From 0.13 the section is the pydantic model
    FSDPConfig, which drops a key it lacks, stripped or not: `fsdp_sharding_strategy` and `backward_prefetch` never
    reach accelerate (omid511's config), so dropping the prefix is no fix for them (SP401)."""
    from difflib import get_close_matches

    from packaging.version import Version

    section = cfg.get("fsdp_config")
    if not isinstance(section, Mapping):
        return []
    if _judged_releases(pins, history) is None:  # a commit seqprof cannot place
        return []
    allowed = history.allowed("axolotl", pins)
    runs = allowed or [history.newest("axolotl")]  # unpinned, or a pin no release meets: the newest is assumed
    installed = max(runs, key=Version)
    before_prefix = all(Version(v) < Version(FSDP_PREFIX_DEPRECATED_FROM) for v in runs)
    fields = history.fields_in("axolotl", installed, ["FSDPConfig"])
    out = []
    for key in section:
        if not isinstance(key, str) or key in FSDP_VERSION_KEYS:
            continue
        dotted = f"fsdp_config.{key}"
        line = cfg.line(dotted) or 1
        bare = key.removeprefix("fsdp_")
        if fields and bare not in fields:
            out.append(_fsdp_key_dropped(dotted, bare, line, cfg.path, allowed, pins, history,
                                         get_close_matches(bare, sorted(fields), n=1, cutoff=0.8)))
        elif bare == key:
            continue
        elif before_prefix:
            out.append(ConfigDiagnostic(
                kind="upcoming_deprecation", key=dotted, file=cfg.path, line=line,
                suggestion=f"fsdp_config.{bare}", message=(
                    f"'{dotted}' is read by the pinned axolotl ({_pinned(allowed)}); axolotl 0.12 and newer deprecate "
                    "the `fsdp_` prefix inside fsdp_config (utils/schemas/validation.py "
                    f"check_fsdp_config_kwargs_prefix): drop it on that upgrade, not before")))
        else:
            how = f"{pins.describe('axolotl')} allows it" if allowed else _assumed_newest(pins, installed)
            out.append(ConfigDiagnostic(
                kind="deprecated_key", key=dotted, file=cfg.path, line=line, suggestion=f"fsdp_config.{bare}",
                message=(f"'{dotted}' is deprecated: axolotl 0.12 and newer warn \"Configuring FSDP fields with the "
                         "`fsdp_` prefix is deprecated\" and strip the prefix (utils/schemas/validation.py "
                         f"check_fsdp_config_kwargs_prefix); {how}")))
    return out


def _fsdp_key_dropped(dotted: str, bare: str, line: int, path: str, allowed: list[str] | None, pins: Pins,
                      history: KeyHistory, close: list[str]) -> ConfigDiagnostic:
    """A fsdp_config key the FSDPConfig of the axolotl that pip installs lacks: pydantic drops it."""
    from packaging.version import Version

    installed = max(allowed, key=Version) if allowed else history.newest("axolotl")
    if not allowed:
        how = _assumed_newest(pins, installed)
    elif all(Version(v) >= Version(FSDP_MODEL_FROM) for v in allowed):
        how = f"every release {pins.describe('axolotl')} allows drops it"
    else:
        how = f"{pins.describe('axolotl')} allows it: pip installs {minor(installed)}, which drops it (releases " \
              "before 0.13 hand fsdp_config to accelerate as written)"
    stripped = " (the `fsdp_` prefix stripped)" if bare != dotted.split(".", 1)[1] else ""
    reason = (f"From 0.13 axolotl validates fsdp_config as FSDPConfig (utils/schemas/fsdp.py), which has no field "
              f"'{bare}'{stripped}: pydantic drops it, and its value never reaches accelerate; {how}")
    return ConfigDiagnostic(
        kind="unknown_key", key=dotted, file=path, line=line, suggestion=f"fsdp_config.{close[0]}" if close else None,
        message=f"'{dotted}' is ignored: {reason[0].lower()}{reason[1:]}", reason=reason)


# sections a pydantic model of their own validates, dropping any key it lacks (key_history.json classes), and where
SECTION_MODELS = {"special_tokens": ("SpecialTokensConfig", "utils/schemas/model.py"),
                  "trl": ("TRLConfig", "utils/schemas/trl.py"), "vllm": ("VllmConfig", "utils/schemas/vllm.py")}


def _schema_release(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> tuple[str, str] | None:
    """The axolotl release whose pydantic models judge a section's or a dataset entry's keys (the newest the pins
    allow; the newest known when nothing pins axolotl or the main branch runs), and how the message says so; None
    for a fork or a commit seqprof cannot place."""
    if framework_fork(cfg.path) is not None:
        return None
    if _judged_releases(pins, history) is None:  # a commit seqprof cannot place
        return None
    allowed = history.allowed("axolotl", pins)
    installed = history.installed("axolotl", pins) or history.newest("axolotl")
    return installed, (f"{pins.describe('axolotl')} installs {minor(installed)}" if allowed else
                       _assumed_newest(pins, installed))


def _section_keys(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A key of `special_tokens:`, `trl:` or `vllm:` that the section's model lacks: pydantic drops it (AbeerMostafa's
    `special_tokens: {ad_token: ...}`, a typo of pad_token; tcapelle's `trl: {vllm: {...}}`, a top-level section
    written inside another). A key the top level reads is told to move there. A fork says nothing; a commit pin (an
    image's main build seqprof cannot date) only of a key no release's model ever had; a release without the model
    (trl: before 0.8) nothing."""
    release = _schema_release(cfg, pins, history)
    order = history.versions("axolotl")
    commit = release is None and framework_fork(cfg.path) is None and _judged_releases(pins, history) is None
    if release is None and not commit:
        return []
    build = pins.vcs("axolotl")
    installed, where = release or (order[-1], f"axolotl from {build.source if build else 'a commit'}; no "
                                              f"release ({minor(order[0])}-{minor(order[-1])}) has it")
    top: set[str] | None = None  # the top-level fields, read once a section key needs them
    out = []
    for name, (model, source) in SECTION_MODELS.items():
        section = cfg.get(name)
        if not isinstance(section, Mapping):
            continue
        fields = history.ever("axolotl", [model]) if commit else history.fields_in("axolotl", installed, [model])
        for key in section:
            if not fields or not isinstance(key, str) or key in fields or section.get(key) is None:
                continue
            if top is None:
                top = history.ever("axolotl", ["AxolotlInputConfig"]) if commit else \
                    history.fields_in("axolotl", installed, ["AxolotlInputConfig"])
            dotted = f"{name}.{key}"
            top_level = key in top  # ikedachin's special_tokens.eot_tokens, tcapelle's trl.vllm
            guess = key if top_level else did_you_mean(key, fields)
            had = history.having("axolotl", key, [model])  # trl.vllm_device: TRLConfig's up to 0.7
            later = [v for v in had if order.index(v) > order.index(installed)]
            since = (f" (axolotl adds it in {minor(min(later, key=order.index))})" if later else
                     f" (it had one up to {minor(max(had, key=order.index))})" if had else "")
            reason = (f"{model} ({source}) has no field '{key}'{since}: pydantic drops it, so "
                      + ("axolotl reads it only as a top-level key" if top_level else "its value is never used")
                      + f"; {where}")
            out.append(ConfigDiagnostic(kind="unknown_key", key=dotted, file=cfg.path, line=cfg.line(dotted) or 1,
                                        message=f"'{dotted}' is ignored: {reason}", reason=reason,
                                        suggestion=guess if top_level else f"{name}.{guess}" if guess else None))
    return out


# the models a dataset entry is validated as: validate_config builds DPODataset for rl: dpo/ipo/simpo, KTODataset for
# kto, SFTDataset otherwise (utils/config/__init__.py, 0.19.0); the union of every one of a release is what no
# release can have read, so an entry key none of them has is dropped whichever model it ends in
DATASET_MODELS = {"datasets": ("SFTDataset", "DPODataset", "KTODataset", "StepwiseSupervisedDataset",
                               "SyntheticDataset"),
                  "test_datasets": ("SFTDataset", "DPODataset", "KTODataset", "StepwiseSupervisedDataset",
                                    "SyntheticDataset"),
                  "pretraining_dataset": ("PretrainingDataset", "SFTDataset")}


def _dataset_entry_keys(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """A key of a `datasets:` entry that no dataset model of the release has: pydantic drops it when it builds the
    entry, so the setting is never used (sarpsl's `field_map:` and `validation_path:`, Mikeriess's `train_split:`,
    jbremz's `dset_type:`, a typo of ds_type). A commit pin or a fork says nothing, as for the sections."""
    release = _schema_release(cfg, pins, history)
    if release is None:
        return []
    installed, where = release
    order = history.versions("axolotl")
    out = []
    top: set[str] | None = None  # the top-level fields, read once an entry key needs them
    for name, models in DATASET_MODELS.items():
        entries = cfg.get(name)
        entries = [entries] if isinstance(entries, Mapping) else entries
        if not isinstance(entries, list):
            continue
        fields = history.fields_in("axolotl", installed, models)
        if not fields:
            continue
        built = ", ".join(m for m in models if history.fields_in("axolotl", installed, [m]))
        for i, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                continue
            for key in entry:
                if not isinstance(key, str) or key in fields or entry.get(key) is None:
                    continue
                dotted = f"{name}.{i}.{key}" if isinstance(cfg.get(name), list) else f"{name}.{key}"
                if top is None:
                    top = history.fields_in("axolotl", installed, ["AxolotlInputConfig"])
                top_level = key in top  # tcapelle's eot_tokens, muellerzr's train_on_inputs
                guess = None if top_level else did_you_mean(key, fields)
                had = history.having("axolotl", key, list(models))  # train_on_split: SFTDataset's up to 0.8
                since = f" (one had up to {minor(max(had, key=order.index))})" if had else ""
                reason = (f"no dataset model of axolotl ({built}; utils/schemas/datasets.py) has a field "
                          f"'{key}'{since}: pydantic drops it when it builds the entry, so "
                          + ("axolotl reads it only as a top-level key" if top_level else "its value is never used")
                          + f"; {where}")
                out.append(ConfigDiagnostic(kind="unknown_key", key=dotted, file=cfg.path,
                                            line=cfg.line(dotted) or cfg.line(name) or 1,
                                            message=f"'{dotted}' is ignored: {reason}", reason=reason,
                                            suggestion=key if top_level else
                                            dotted.rsplit(".", 1)[0] + f".{guess}" if guess else None))
    return out


def _assumed_newest(pins: Pins, newest: str) -> str:
    """Why the newest axolotl is what the message judges by: no pin, or a pin no known release meets."""
    if pins.of("axolotl"):
        return f"{pins.describe('axolotl')} matches no release known: axolotl {newest} assumed"
    return f"no axolotl pin found: axolotl {newest} assumed"


def _releases_run(pins: Pins, history: KeyHistory) -> list[str] | None:
    """The axolotl releases the pins allow (None: unpinned); a checkout's own version older than every release the
    history holds (unknown-submitter-000's fork, setup.py version="0.3.0-dev") stands for itself."""
    return _older_copy(pins, history) or history.allowed("axolotl", pins)


def _older_copy_unstaged(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> bool:
    """A checkout older than every release the history holds whose config schema is not beside the config: the
    classes that are (z7ye's trainer_builder.py) do not say what it reads (NextAI-Inc's staged v0_4_1 schema does)."""
    from seqprof.config.project_fields import project_fields

    return _older_copy(pins, history) is not None and \
        not any(f.owner in SCHEMA_CLASSES for f in project_fields(cfg.path).values())


def _older_copy(pins: Pins, history: KeyHistory) -> list[str] | None:
    """The checkout's own versions when they are older than every release the history holds, else None."""
    from packaging.version import InvalidVersion, Version

    own = [re.sub(r"^==", "", p.specifier) for p in pins.of("axolotl") if p.own]
    try:
        return own if own and all(Version(v) < Version(history.versions("axolotl")[0]) for v in own) else None
    except InvalidVersion:
        return None


def _pinned(allowed: list[str]) -> str:
    return "axolotl " + (minor(allowed[0]) if len(allowed) == 1 else f"{minor(allowed[0])}-{minor(allowed[-1])}")


def _attention_flag_fixes(diagnostics: list[ConfigDiagnostic], cfg: LoadedConfig,
                          allowed: list[str] | None) -> list[ConfigDiagnostic]:
    """A legacy attention flag's fix names the value to set, not just the new key.

    axolotl maps `flash_attention: true` to `attn_implementation: flash_attention_2`; a flag that
    is false does nothing (the normalizer drops it), and one beside `attn_implementation` makes
    axolotl raise (SP422): both are to be removed, not renamed (config.py normalize_attn_implementation).
    Releases before 0.17 read the flags as plain fields (0.16.1 schemas/config.py: no deprecated=, and its
    attn_implementation only names a custom kernel), so under pins *allowed* only those, the rename is a note
    for the upgrade (SP429), its fix not yet possible."""
    from packaging.version import Version

    impls = dict(LEGACY_ATTN)
    explicit = cfg.get("attn_implementation") is not None
    before = bool(allowed) and all(Version(v) < Version(ATTN_FLAGS_DEPRECATED_FROM) for v in allowed)  # [] (a
    # pin no release meets, a fork's `0.3.0-dev`) says nothing
    out = []
    for d in diagnostics:
        if d.key in impls and d.kind in ("renamed_key", "deprecated_key", "upcoming_deprecation") and before:
            if as_bool(cfg.get(d.key)) is True and not explicit:  # a note for the upgrade, as SP429 says of any
                out.append(replace(d, kind="upcoming_deprecation", suggestion=f"attn_implementation: {impls[d.key]}",
                                   value_change=None, message=(
                    f"'{d.key}' is read by the pinned axolotl ({_pinned(allowed)}); axolotl 0.17 and newer deprecate "
                    f"it for attn_implementation: {impls[d.key]}: rename it on that upgrade, not before (the "
                    "pinned release has no such value)")))
            continue
        if d.kind != "renamed_key" or d.key not in impls:
            out.append(d)
        elif as_bool(cfg.get(d.key)) is True and not explicit:
            out.append(replace(d, suggestion=f"attn_implementation: {impls[d.key]}"))
        else:
            why = ("false is the default, so the flag does nothing" if as_bool(cfg.get(d.key)) is not True
                   else "with attn_implementation set it is refused (SP422)")
            out.append(replace(d, kind="deprecated_key", suggestion=None,
                               message=f"'{d.key}' is deprecated in axolotl's schema (config.py): {why}"))
    return out


def _zero(value: Any) -> bool:
    """A 0 written as a number or as text (axolotl's schema coerces "0" to 0), never a boolean."""
    if isinstance(value, bool):
        return False
    try:
        return float(value) == 0
    except (TypeError, ValueError):
        return False
