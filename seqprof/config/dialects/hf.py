"""Hugging Face ``TrainingArguments`` YAML (what HfArgumentParser.parse_yaml_file reads).

Keys: the fields of ``transformers.TrainingArguments`` (committed list, generated from the
installed transformers by scripts/gen_dialect_keys.py), plus the model/data arguments of
transformers' own example scripts (examples/pytorch/language-modeling/run_clm.py), which such
YAML files usually carry alongside.

Defaults (transformers TrainingArguments, training_args.py):
- per_device_train_batch_size 8, gradient_accumulation_steps 1, num_train_epochs 3.0,
  learning_rate 5e-5, optim "adamw_torch";
- save_strategy "steps" with save_steps 500: a checkpoint every 500 optimizer steps;
- gradient (activation) checkpointing off; fp32 unless bf16/fp16 is set;
- train_sampling_strategy "random" (a fresh shuffle every epoch); "group_by_length" sorts
  mega-batches by length (the v4 ``group_by_length: true``);
- padding: the Trainer's default collator (DataCollatorWithPadding) pads each batch to its
  longest row.

Keys transformers 5 renamed or removed are reported (renamed_key/deprecated_key) with the
replacement and the change that made it: group_by_length -> train_sampling_strategy
(huggingface/transformers#43138), warmup_ratio -> warmup_steps as a float in [0, 1)
(#41326), evaluation_strategy -> eval_strategy (4.41), overwrite_output_dir
(removed in 5), and the aliases the installed version marks deprecated in its own help text
(gradient_checkpointing -> activation_checkpointing). Every other field older releases had is a
removal too (keys/key_history.json); the release that removed a key comes from that history and
is an error when every transformers version the project pins lacks it (seqprof.config.versions).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    Moved,
    as_bool,
    as_number,
    check_keys,
    link_deepspeed,
    load_keys_file,
    positive_or_missing,
    precision_from_flags,
    premature_key,
)
from seqprof.config.dialects.constant_warmup import warmup_unread
from seqprof.config.dialects.enum_values import names_the_release_lacks
from seqprof.config.dialects.fsdp_checkpointing import checkpointing_twice
from seqprof.config.dialects.report_to import report_to_null
from seqprof.config.dialects.resume_flag import resume_needs_checkpoint
from seqprof.config.dialects.save_schedule import refused_save_schedules, saves_at_each_evaluation
from seqprof.config.dialects.scheduler_kwargs import scheduler_kwargs_problems
from seqprof.config.dialects.trainer_deepspeed import Stated, refused_values, replaced_by_deepspeed
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import project_fields, read_by_project, renamed_by_project
from seqprof.config.project_saves import callback_saves
from seqprof.config.text_numbers import numbers_read_as_text
from seqprof.config.values import value_problem
from seqprof.config.key_history import KeyHistory, assumed, describe_versions, minor, with_companions
from seqprof.config.pins import Pins
from seqprof.config.versions import pins_beside

NAME = "hf"
USES_PINS = True  # read_plan hands build() the version pins (--versions, else the files beside the config)
LABEL = "transformers' TrainingArguments"
TA_SOURCE = "transformers TrainingArguments default (training_args.py)"

# transformers examples/pytorch/language-modeling/run_clm.py ModelArguments / DataTrainingArguments
EXAMPLE_SCRIPT_KEYS = frozenset({
    "model_name_or_path", "model_type", "config_overrides", "config_name", "tokenizer_name", "cache_dir",
    "use_fast_tokenizer", "model_revision", "token", "trust_remote_code", "torch_dtype", "dtype",
    "low_cpu_mem_usage", "dataset_name", "dataset_config_name", "train_file", "validation_file",
    "max_train_samples", "max_eval_samples", "streaming", "block_size", "overwrite_cache",
    "validation_split_percentage", "preprocessing_num_workers", "keep_linebreaks", "max_seq_length",
    "attn_implementation",
})

# keys TrainingArguments had in transformers 4.x and no longer has
LEGACY_RENAMED: Mapping[str, Moved] = {
    "group_by_length": Moved("train_sampling_strategy",
                             "transformers 5 folded it into train_sampling_strategy: group_by_length "
                             "(huggingface/transformers#43138)",
                             value_change="the value changes: 'group_by_length: true' becomes "
                                          "'train_sampling_strategy: group_by_length'", inert=(False,)),
    "warmup_ratio": Moved("warmup_steps",
                          "deprecated in transformers 5.0 (huggingface/transformers#41326)",
                          value_change="the value stays the ratio: warmup_steps reads a float in [0, 1) as one",
                          replacement_from="5.0.0", inert=(0,)),  # 4.x's warmup_steps is an int
    "evaluation_strategy": Moved("eval_strategy", "renamed in transformers 4.41 (the old name was deprecated)",
                                 inert=("no", False)),  # an unquoted `no` is YAML 1.1's false
    "evaluate_during_training": Moved("eval_strategy",
                                      "deprecated in transformers 3.2 for evaluation_strategy (renamed eval_strategy "
                                      "in 4.41); removed in 4.0",
                                      value_change="the value changes: 'evaluate_during_training: true' becomes "
                                                   "'eval_strategy: steps'", inert=(False,)),
    "per_gpu_train_batch_size": Moved("per_device_train_batch_size",
                                      "renamed in transformers 2.11 (the old name was deprecated); removed in 5",
                                      inert=(None,)),
    "per_gpu_eval_batch_size": Moved("per_device_eval_batch_size",
                                     "renamed in transformers 2.11 (the old name was deprecated); removed in 5",
                                     inert=(None,)),
    "no_cuda": Moved("use_cpu", "renamed in transformers 4.34; removed in 5", inert=(False,)),
    "push_to_hub_token": Moved("hub_token", "renamed in transformers 4.x; removed in 5", inert=(None,)),
    "push_to_hub_model_id": Moved("hub_model_id", "renamed in transformers 4.x; removed in 5", inert=(None,)),
}
LEGACY_DEPRECATED: Mapping[str, Moved] = {
    "overwrite_output_dir": Moved(None, "removed from TrainingArguments in transformers 5 (the Trainer itself never read it)"),
    "logging_dir": Moved(None, "deprecated in transformers 5 (logs go under output_dir)"),
    "save_safetensors": Moved(None, "removed in transformers 5, which always saves safetensors", inert=(True,)),
    "include_tokens_per_second": Moved("include_num_input_tokens_seen", "removed in transformers 5", inert=(False,)),
    "use_mps_device": Moved(None, "removed in transformers 5 (MPS is used automatically)", inert=(False,)),
    "fp16_backend": Moved(None, "removed in transformers 5"),
}

SIGNATURE_WEIGHT = 1  # each TrainingArguments key present adds this to the hf score


@cache
def training_argument_fields() -> frozenset[str]:
    """TrainingArguments field names from the committed list (no transformers import)."""
    return frozenset(load_keys_file("hf_training_arguments")["fields"])


@cache
def deprecated_aliases() -> Mapping[str, Moved]:
    """old -> its new name, said as deprecated since the release that brought the new name (gradient_checkpointing_
    kwargs: 5.23, which added activation_checkpointing_kwargs), not the release the key list was made from."""
    from packaging.version import Version

    keys = load_keys_file("hf_training_arguments")
    history = KeyHistory.load()

    def since(new: str) -> str:
        having = history.having("transformers", new, ["TrainingArguments"])
        return minor(min(having, key=Version)) if having else keys["version"]

    return {old: Moved(new, f"a deprecated alias since transformers {since(new)} (to be removed in v6)")
            for old, new in keys["deprecated_aliases"].items()}


def keyspace(history: KeyHistory | None = None) -> Keyspace:
    """The keys an HF TrainingArguments YAML may hold, with transformers' renames/deprecations and the fields
    older releases had (keys/key_history.json)."""
    history = history or KeyHistory.load()
    aliases = deprecated_aliases()
    known = (training_argument_fields() | EXAMPLE_SCRIPT_KEYS) - frozenset(aliases)
    older = history.ever("transformers", ["TrainingArguments"]) - known - set(LEGACY_RENAMED)
    removed = {k: Moved(None, "a TrainingArguments field of earlier transformers releases") for k in sorted(older)}
    return Keyspace(known=known, renamed=LEGACY_RENAMED, deprecated={**removed, **LEGACY_DEPRECATED, **aliases},
                    typo_targets=training_argument_fields() - frozenset(aliases))


def removal_judge(pins: Pins, history: KeyHistory):
    """key -> Removal under *pins*, from TrainingArguments' history."""
    return lambda key: history.removal("transformers", key, ["TrainingArguments"], pins)


def arrival_judge(pins: Pins, history: KeyHistory):
    """replacement -> Removal('later') when no release *pins* allow has TrainingArguments.<replacement> yet."""
    return lambda replacement, since=None: history.arrival("transformers", replacement, ["TrainingArguments"], pins,
                                                           since)


WARMUP_STEPS_INT_CHECKED_FROM = "4.42.0"  # TrainingArguments.__post_init__ raises on a warmup_steps that is no int
WARMUP_STEPS_FLOAT_FROM = "5.0.0"  # warmup_steps: float, a value below 1 is the ratio (get_warmup_steps)


def warmup_steps_refused(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """`warmup_steps: 0.1` is transformers 5's warmup ratio; the 4.x that pins cap transformers at read an int.

    4.42-4.57 refuse a float before anything loads (training_args.py __post_init__: "warmup_steps must be either
    0 or > 1", from 4.44 "must be of type int and must be 0 or a positive integer"); 4.36-4.41 take it as a step
    count, so get_warmup_steps returns 0.1 and the run has no warmup. Judged by the release pip installs (the
    newest the pins allow), as key removals are; none when it is 5.0 or newer."""
    from packaging.version import Version

    value = cfg.get("warmup_steps")
    if not isinstance(value, float) or not 0 <= value:
        return []
    installed = history.installed("transformers", pins)
    if installed is None:  # unpinned (a fresh install gets 5.x) or a pin no release meets
        return []
    if Version(installed) >= Version(WARMUP_STEPS_FLOAT_FROM):
        return []
    fix = f"; a ratio goes in warmup_ratio ({value} of the steps) under 4.x" if value < 1 else ""
    if Version(installed) >= Version(WARMUP_STEPS_INT_CHECKED_FROM):
        message = (f"'warmup_steps: {value}' is refused: transformers {WARMUP_STEPS_INT_CHECKED_FROM.rsplit('.', 1)[0]}"
                   "-4.57 raise ValueError in TrainingArguments.__post_init__ on a warmup_steps that is not an int "
                   f"(5.0 made it a float), and {pins.describe('transformers')} installs {minor(installed)}{fix}")
    elif value < 1:
        message = (f"'warmup_steps: {value}' warms up over {value} of a step: transformers before 5.0 read "
                   f"warmup_steps as a step count (get_warmup_steps), and {pins.describe('transformers')} installs "
                   f"{minor(installed)}, so the run has no warmup{fix}")
    else:
        return []
    return [ConfigDiagnostic(kind="invalid_value", key="warmup_steps", file=cfg.path,
                             line=cfg.line("warmup_steps") or 1, message=message,
                             suggestion="warmup_ratio" if value < 1 else None)]


WARMUP_RATIO_REPLACES_STEPS_FROM = "5.0.0"  # __post_init__: a warmup_ratio given is copied over warmup_steps


def overriding_warmup_steps(cfg: LoadedConfig) -> tuple[float, str] | None:
    """The warmup_steps above 0 that a run of *cfg* gets, and where it comes from: the file, else a literal default
    of the project's own TrainingArguments subclass (CustomPOs' CustomPOConfig: `warmup_steps = field(default=150)`).
    None when it is 0 or unknown."""
    steps = cfg.get("warmup_steps")
    if "warmup_steps" in cfg.data:
        return (steps, f"warmup_steps: {steps} (line {cfg.line('warmup_steps')})") \
            if _number(steps) and steps > 0 else None
    declared = project_fields(cfg.path).get("warmup_steps")
    if declared is None or not declared.extends_training_arguments() or not _number(declared.default) \
            or declared.default <= 0:
        return None
    return declared.default, f"the project's own {declared.where()} defaults warmup_steps to {declared.default}"


def warmup_ratio_overridden(cfg: LoadedConfig, pins: Pins, history: KeyHistory) -> list[ConfigDiagnostic]:
    """warmup_ratio beside a warmup_steps above 0: one of the two has no effect, and which depends on the release.

    transformers 4.x get_warmup_steps uses warmup_steps whenever it is above 0, and __post_init__ says so only at
    info level, unseen at the default verbosity; 5.0-5.14 copy a warmup_ratio given over warmup_steps (with a
    deprecation warning); 5.15 drops warmup_ratio (SP408/SP402 say so). Judged at the release pip installs (the
    newest the pins allow); none unpinned, where a fresh install has no warmup_ratio. A ratio of 0 is copied too
    (`if self.warmup_ratio is not None`), so from 5.0 it turns warmup off; before 5.0 it changes nothing."""
    from packaging.version import Version

    ratio = cfg.get("warmup_ratio")
    if not _number(ratio) or ratio < 0:
        return []
    steps = overriding_warmup_steps(cfg)
    installed = history.installed("transformers", pins)
    if steps is None or installed is None:
        return []
    if ratio == 0 and Version(installed) < Version(WARMUP_RATIO_REPLACES_STEPS_FROM):
        return []
    if "warmup_ratio" not in history.fields_in("transformers", installed, ["TrainingArguments"]):
        return []
    value, source = steps
    release = f"{pins.describe('transformers')}, like every 4.x release," if history.older_than_known(
        "transformers", pins) else f"transformers {minor(installed)} (which {pins.describe('transformers')} installs)"
    if Version(installed) < Version(WARMUP_RATIO_REPLACES_STEPS_FROM):
        key, message = "warmup_ratio", (
            f"'warmup_ratio: {ratio}' has no effect: {source}, and {release} warms up over warmup_steps whenever "
            "it is above 0 (TrainingArguments.get_warmup_steps; __post_init__ says so only at info level)")
    elif "warmup_steps" in cfg.data:
        no_warmup = ", so the run does not warm up at all" if ratio == 0 else ""
        key, message = "warmup_steps", (
            f"'warmup_steps: {value}' has no effect: the file also sets warmup_ratio: {ratio} (line "
            f"{cfg.line('warmup_ratio')}), and {release} copies warmup_ratio over warmup_steps "
            f"(TrainingArguments.__post_init__, 5.0-5.14){no_warmup}")
    else:  # the ratio replaces the project's default, as the file means it to
        return []
    return [ConfigDiagnostic(kind="overridden_setting", key=key, file=cfg.path, line=cfg.line(key) or 1,
                             message=message)]


def without_moot_ratio_upgrade(found: list[ConfigDiagnostic], diagnostics: list[ConfigDiagnostic],
                               fields: dict) -> list[ConfigDiagnostic]:
    """No upgrade warning on a warmup_ratio that has no effect at the pin and that the project re-declares on its
    TrainingArguments subclass (CustomPOConfig): its parser takes the key on every release, so the upgrade changes
    nothing the run has now; the overridden_setting diagnostic says what to fix."""
    declared = fields.get("warmup_ratio")
    if declared is None or not declared.extends_training_arguments() or not any(
            d.kind == "overridden_setting" and d.key == "warmup_ratio" for d in diagnostics):
        return found
    return [d for d in found if not (d.key == "warmup_ratio" and d.kind in RATIO_UPGRADE_KINDS)]


RATIO_UPGRADE_KINDS = frozenset({"removed_key", "deprecated_key", "renamed_key"})


def without_inert_moves(found: list[ConfigDiagnostic], cfg: LoadedConfig) -> list[ConfigDiagnostic]:
    """A moved key set to what leaving it out does (`no_cuda: false`), in a file every script reads with a parser
    that drops keys its classes lack (parse_json_file(..., allow_extra_keys=True)): the release that removes the key
    drops it without a word and the run is the same, so there is nothing to migrate. An SP407 note that says so
    (seal-wang/chinese_llama's three JSON configs under transformers==4.31.0)."""
    from seqprof.config.parser_classes import extra_keys_dropped

    moved = {**LEGACY_RENAMED, **LEGACY_DEPRECATED}
    inert = {d.key for d in found if d.kind in RATIO_UPGRADE_KINDS and d.key in moved
             and _is_one_of(cfg.data.get(d.key), moved[d.key].inert)}
    where = extra_keys_dropped(cfg.path, [k for k in cfg.data if isinstance(k, str)]) if inert else None
    if where is None:
        return found
    return [replace(d, kind="unread_key", suggestion=None, value_change=None, suggestion_from=None,
                    message=f"'{d.key}: {json.dumps(cfg.data[d.key])}' does what leaving it out does, and the "
                            f"script's parser drops keys its classes lack ({where}), so when transformers removes "
                            f"'{d.key}' the run stays the same: removing it changes nothing")
            if d.key in inert and d.kind in RATIO_UPGRADE_KINDS else d for d in found]


def _is_one_of(value: Any, values: tuple) -> bool:
    """*value* is one of *values*: a bool only as a bool (0 is not false), a string in any case."""
    for one in values:
        if isinstance(one, bool) or isinstance(value, bool):
            if value is one:
                return True
        elif isinstance(one, str) and isinstance(value, str):
            if value.strip().lower() == one:
                return True
        elif value == one:
            return True
    return False


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ChatGLM3 / GLM-4's finetune_hf.py: `Seq2SeqTrainingArguments(**config["training_args"])`, the rest of the file
# (data_config, peft_config, max_input_length) read by the script itself
SECTION = "training_args"


def detect(data: Mapping[str, Any]) -> int:
    from seqprof.config.dialects.own_schema import composed, hand_mapped, mostly_foreign, own_sections

    if hand_mapped(data) or own_sections(data) or composed(data):
        return 0
    fields = training_argument_fields() | frozenset(LEGACY_RENAMED) | frozenset(LEGACY_DEPRECATED)
    if mostly_foreign(data, fields | EXAMPLE_SCRIPT_KEYS):
        return 0
    score = sum(SIGNATURE_WEIGHT for k in data if k in fields)
    if score < 2 and isinstance(data.get(SECTION), Mapping):  # TrainingArguments one level down
        score = sum(SIGNATURE_WEIGHT for k in data[SECTION] if k in fields)
    return score if score >= 2 else 0


def arguments_section(cfg: LoadedConfig) -> str:
    """'' when the TrainingArguments keys are the file's own, SECTION when they sit one level down."""
    fields = training_argument_fields()
    nested = cfg.data.get(SECTION)
    if isinstance(nested, Mapping) and sum(k in fields for k in nested) > sum(k in fields for k in cfg.data):
        return SECTION
    return ""


def _unused_train_batch_size(b: Builder, key: str) -> bool:
    """A train batch size of 0 in a file that says `do_train: false`: nothing reads it. The Trainer builds its
    train DataLoader only in train(), which the scripts call under `if training_args.do_train`, and no
    TrainingArguments release checks the value (obi-ml-public/ehr_deidentification's predict and eval files write
    0 there on purpose)."""
    value = b.raw(key)
    return as_bool(b.raw("do_train")) is False and (type(value) is int and value == 0 or value == "0")


def apply_training_arguments(b: Builder, *, source: str = TA_SOURCE) -> None:
    """Map the TrainingArguments keys every HF-based dialect shares onto canonical settings."""
    for key in ("per_device_train_batch_size", "per_gpu_train_batch_size"):
        if not _unused_train_batch_size(b, key):
            b.stated("micro_batch_size", key, as_number)
    b.stated("gradient_accumulation_steps", "gradient_accumulation_steps", as_number)
    b.stated("max_steps", "max_steps", positive_or_missing)
    # with max_steps > 0 the Trainer derives the epochs from it and never reads num_train_epochs (trainer.py
    # set_initial_training_values): open-r1's `num_train_epochs: -1` beside max_steps is an idiom, not a mistake
    if b.value("max_steps") is None or not value_problem("num_epochs", b.raw("num_train_epochs")):
        b.stated("num_epochs", "num_train_epochs", as_number)
    b.stated("learning_rate", "learning_rate", as_number)
    b.stated("optimizer", "optim")
    precision_from_flags(b, ["bf16", "bf16_full_eval"], ["fp16"])
    b.stated("gradient_checkpointing", "activation_checkpointing", as_bool)
    b.stated("gradient_checkpointing", "gradient_checkpointing", as_bool)
    strategy = b.raw("train_sampling_strategy")
    if strategy is not None:
        b.derived("group_by_length", strategy == "group_by_length", "train_sampling_strategy")
        b.derived("shuffle", strategy != "sequential", "train_sampling_strategy")
    b.stated("group_by_length", "group_by_length", as_bool)
    if saves_at_each_evaluation(b.cfg.data):  # SP459 says whether the release refuses the schedule
        b.derived("save_strategy", "evaluation", "load_best_model_at_end")
    b.stated("save_strategy", "save_strategy", lambda v: str(v).lower() if isinstance(v, str) else v)
    b.stated("save_steps", "save_steps", as_number)
    saver = callback_saves(b.cfg.path)
    if saver is not None:  # SP301: the project saves by itself, whatever save_strategy says
        b.derived("saved_by_project", saver, "save_strategy")
    deepspeed = link_deepspeed(b, "deepspeed")
    if deepspeed is not None:
        run = Stated.from_config(b.cfg)
        b.diagnostics.extend(refused_values(run, deepspeed, b.cfg) + replaced_by_deepspeed(run, deepspeed, b.cfg))
    if b.present("fsdp") and b.raw("fsdp") not in ("", [], False):
        b.stated("fsdp", "fsdp")
    if as_bool(b.raw("use_liger_kernel")) is True:
        b.derived("fused_loss", "liger", "use_liger_kernel")
    b.stated("world_size", "world_size", as_number)
    # defaults
    b.default("micro_batch_size", 8, f"per_device_train_batch_size=8, {source}")
    b.default("gradient_accumulation_steps", 1, source)
    b.default("num_epochs", 3.0, f"num_train_epochs=3.0, {source}")
    b.default("learning_rate", 5e-5, source)
    b.default("optimizer", "adamw_torch", f"optim='adamw_torch', {source}")
    b.default("precision", "fp32", "neither bf16 nor fp16 is set, so the Trainer trains in fp32")
    b.default("gradient_checkpointing", False, source)
    b.default("group_by_length", False, "train_sampling_strategy='random', " + source)
    b.default("shuffle", True, "the Trainer's RandomSampler reshuffles every epoch "
                               "(train_sampling_strategy='random')")
    if b.value("save_strategy") in (None, "steps"):
        b.default("save_steps", 500, f"save_steps=500, {source}")
    b.default("save_strategy", "steps", f"save_strategy='steps', {source}")


def premature_training_arguments(cfg: LoadedConfig, pins: Pins, history: KeyHistory,
                                 judged: set[str]) -> list[ConfigDiagnostic]:
    """Keys that are TrainingArguments fields only from a release later than every one the pins allow
    (eval_strategy, 4.41, in nukkk97/pseudo2real's file under transformers==4.37.2): parse_yaml_file /
    parse_json_file / parse_dict refuse a key no dataclass declares ("Some keys are not used by the
    HfArgumentParser"), and TrainingArguments(**mapping) raises TypeError. The older name the pinned release
    reads, where transformers renamed it (evaluation_strategy), is the fix."""
    ever = history.ever("transformers", ["TrainingArguments"])
    out: list[ConfigDiagnostic] = []
    for key in cfg.data:
        if not isinstance(key, str) or key in judged or key not in ever:
            continue
        early = history.premature("transformers", key, ["TrainingArguments"], pins)
        if early is None:
            continue
        older = [old for old, moved in LEGACY_RENAMED.items()
                 if moved.replacement == key and _pinned_release_has(old, pins, history)]
        use = f"; the pinned release reads it as '{older[0]}'" if older else ""
        out.append(premature_key(
            cfg, key, "TrainingArguments", early.detail + use,
            "HfArgumentParser refuses a key no dataclass declares (\"Some keys are not used by the "
            "HfArgumentParser\"), and TrainingArguments(**...) raises TypeError", early.removed_in,
            suggestion=older[0] if older else None))
    return out


def _pinned_release_has(key: str, pins: Pins, history: KeyHistory) -> bool:
    allowed = history.allowed("transformers", pins) or []
    return any(v in history.having("transformers", key, ["TrainingArguments"]) for v in allowed)


def _older_release_may_have_it(found: ConfigDiagnostic, pins: Pins, history: KeyHistory) -> ConfigDiagnostic:
    """A key no TrainingArguments seqprof has read declares, under a pin older than all of them (NeilFranks/
    question_generation's transformers==3.0.0 still had evaluate_during_training): a note that the pinned release
    may have it, not a claim that the parser refuses it. A near miss of a known field keeps its did-you-mean."""
    if found.kind not in ("unknown_key", "unread_key") or found.suggestion:
        return found
    oldest = history.release("transformers", history.versions("transformers")[0])
    return replace(found, kind="unread_key", message=(
        f"'{found.key}' is not a field of TrainingArguments in any release seqprof has read ({oldest} on), and "
        f"{pins.describe('transformers')} is older than all of them: the pinned release may have it"))


def build(cfg: LoadedConfig, variant: str | None = None, pins: Pins | None = None) -> DialectResult:
    """Canonical settings of an HF TrainingArguments YAML; keys judged against *pins* (default: files beside it)."""
    section = arguments_section(cfg)
    if section:  # read the block as its own file: its keys, their lines
        cfg = cfg.section(section)
    b = Builder(cfg)
    history = KeyHistory.load()
    pins = pins if pins is not None else with_companions(pins_beside(cfg.path), history)
    b.first("model", ["model_name_or_path"])
    b.first("max_seq_length", ["max_seq_length", "block_size"], as_number)
    b.stated("attn_implementation", "attn_implementation")
    b.first("datasets", ["dataset_name", "train_file"], lambda v: v if isinstance(v, list) else [v])
    apply_training_arguments(b)
    b.diagnostics.extend(warmup_steps_refused(cfg, pins, history))
    b.diagnostics.extend(warmup_ratio_overridden(cfg, pins, history))
    b.diagnostics.extend(refused_save_schedules(cfg, pins, history))
    b.diagnostics.extend(scheduler_kwargs_problems(cfg, pins, history))
    b.diagnostics.extend(report_to_null(cfg, pins, history))
    b.diagnostics.extend(resume_needs_checkpoint(cfg, "hf"))
    b.diagnostics.extend(names_the_release_lacks(cfg, pins, history))
    b.diagnostics.extend(checkpointing_twice(cfg, pins, history, fsdp_on=b.value("fsdp") is not None))
    b.diagnostics.extend(warmup_unread(cfg))
    b.diagnostics.extend(numbers_read_as_text(cfg))
    b.default("padding", "longest", "the Trainer's default collator (DataCollatorWithPadding) pads each "
                                    "batch to its longest row")
    b.default("framework_versions", describe_versions(["transformers"], pins, history),
              "the transformers version keys were judged against (seqprof.config.versions)")
    found = check_keys(cfg, keyspace(history), dialect_label=LABEL, scripts_read_extra=True,
                       removal=removal_judge(pins, history), arrival=arrival_judge(pins, history),
                       assumption=assumed(["transformers"], pins, history), refuses_removed=True)
    found += premature_training_arguments(cfg, pins, history, {d.key for d in found})
    if history.older_than_known("transformers", pins):
        found = [_older_release_may_have_it(d, pins, history) for d in found]
    if section:  # name each key where it sits
        found = [replace(d, key=f"{section}.{d.key}") for d in found]
    fields = project_fields(cfg.path) if found else {}
    found = read_by_project(found, fields, "transformers", cfg.path, cfg.data) if found else found
    found = renamed_by_project(found, cfg.path) if found else found
    found = without_moot_ratio_upgrade(found, b.diagnostics, fields)
    found = without_inert_moves(found, cfg) if not section else found
    if fields:  # a field of the project's own that its code hands on to TrainingArguments is judged there
        from seqprof.config.dialects.forwarded import handed_on_by_project

        found = handed_on_by_project(found, cfg, fields, pins)
    if not section:
        from seqprof.config.parser_classes import undeclared_by_parser

        found = undeclared_by_parser(found, cfg, "TrainingArguments", pins, history)
        from seqprof.config.project_scripts import project_trainer
        from seqprof.config.trl_imports import missing_import_diagnostics

        built = project_trainer(cfg.path, [k for k in cfg.data if isinstance(k, str)])
        found += missing_import_diagnostics(cfg, pins, history, built[0] if built else None)
    b.diagnostics.extend(found)
    return b.result()
