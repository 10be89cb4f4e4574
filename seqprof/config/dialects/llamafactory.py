"""LLaMA-Factory (v0) YAML (``llamafactory-cli train config.yaml``).

Keys: the dataclasses LLaMA-Factory parses with HfArgumentParser (src/llamafactory/hparams/:
model_args.py, data_args.py, finetuning_args.py, generating_args.py, evaluation_args.py,
training_args.py = RayArguments + transformers' Seq2SeqTrainingArguments), the Megatron
(USE_MCA) and Megatron-Bridge arguments its examples use, and KTransformers' options. The
parser is strict (``allow_extra_keys=False``): an unknown key stops the run at start-up.
Every release's arguments are in keys/key_history.json (scripts/gen_key_history.py, read from the wheels):
a key an older release had and the newest lacks (ray_run_name, gone in 0.9.5; visual_inputs, gone in
0.9.0) is judged by the llamafactory version the project pins (SP408 / a warning / the assumed release
named, seqprof.config.versions), and the newest release's own arguments are known. TrainingArguments keys
follow the transformers pin when the project pins transformers, else the transformers range the pinned
(or assumed) llamafactory release requires in its METADATA (0.9.1: transformers>=4.41.2,<=4.46.1), so
warmup_ratio, which transformers 5.15 dropped, is right under every release that caps transformers below it.

Defaults (hparams/*.py @ hiyouga/LLaMA-Factory):
- stage "sft", finetuning_type "lora" with lora_rank 8, lora_alpha = 2 x lora_rank,
  lora_target "all"; cutoff_len 2048 (longer rows are truncated, data/processor infer_seqlen);
- packing off for SFT (each batch padded to its longest row by the Seq2Seq collator) and on
  for pre-training ("Will automatically enable in pre-training", data_args.py);
- gradient checkpointing on unless disable_gradient_checkpointing (model/model_utils);
- the rest is transformers' TrainingArguments (batch 8, 3 epochs, save every 500 steps).
``quantization_bit: 4`` is QLoRA on 4-bit bitsandbytes weights, 8 is LoRA on 8-bit weights.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.dialects import hf
from seqprof.config.dialects.enum_values import names_the_release_lacks
from seqprof.config.dialects.llamaboard import board_arguments, is_board
from seqprof.config.dialects.llamafactory_template import unregistered_template
from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    Moved,
    as_bool,
    as_number,
    check_keys,
    split_list,
)
from seqprof.config.dialects.constant_warmup import warmup_unread
from seqprof.config.dialects.resume_flag import resume_needs_checkpoint
from seqprof.config.dialects.save_schedule import refused_save_schedules
from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic
from seqprof.config.project_fields import (Fork, framework_fork, project_root, python_files, read_by_fork,
                                          read_by_own_copy, read_by_project_code, source_text)
from seqprof.config.text_numbers import numbers_left_as_text
from seqprof.config.key_history import KeyHistory, Removal, assumed, describe_versions, with_dependency_floor
from seqprof.config.pins import Pins
from seqprof.config.versions import pins_beside

NAME = "llamafactory"
USES_PINS = True  # read_plan hands build() the version pins (--versions, else the files beside the config)
PACKAGES = ("llamafactory", "transformers")
# the hparams dataclasses keys/key_history.json records (TrainingArguments: LLaMA-Factory's own fields only)
CLASSES = ("ModelArguments", "DataArguments", "TrainingArguments", "FinetuningArguments", "GeneratingArguments",
           "EvaluationArguments")
TA = ["TrainingArguments"]
LABEL = "LLaMA-Factory"
SRC = "LLaMA-Factory default (src/llamafactory/hparams/{})"

MODEL_ARGS = """model_name_or_path adapter_name_or_path adapter_folder cache_dir use_fast_tokenizer resize_vocab
split_special_tokens add_tokens add_special_tokens new_special_tokens_config init_special_tokens model_revision
low_cpu_mem_usage rope_scaling flash_attn shift_attn mixture_of_depths use_unsloth use_unsloth_gc
enable_liger_kernel moe_aux_loss_coef disable_gradient_checkpointing use_reentrant_gc upcast_layernorm
upcast_lmhead_output train_from_scratch infer_backend offload_folder use_kv_cache use_v1_kernels infer_dtype
hf_hub_token ms_hub_token om_hub_token print_param_status trust_remote_code quantization_method quantization_bit
quantization_type double_quantization quantization_device_map fp8 fp8_backend fp8_enable_fsdp_float8_all_gather
image_max_pixels image_min_pixels image_do_pan_and_scan crop_to_patches video_max_pixels video_min_pixels
video_fps video_maxlen use_audio_in_video audio_sampling_rate export_dir export_size export_device
export_quantization_bit export_quantization_dataset export_quantization_nsamples export_quantization_maxlen
export_legacy_format export_hub_model_id vllm_maxlen vllm_gpu_util vllm_enforce_eager vllm_max_lora_rank
vllm_config sglang_maxlen sglang_mem_fraction sglang_tp_size sglang_config sglang_lora_backend use_kt
kt_optimize_rule cpu_infer chunk_size mode kt_maxlen kt_use_cuda_graph kt_mode kt_force_think kt_config
kt_cpu_activation kt_weight_path kt_non_expert_weight_path"""
DATA_ARGS = """template dataset eval_dataset dataset_dir media_dir cutoff_len train_on_prompt mask_history
streaming buffer_size mix_strategy interleave_probs overwrite_cache preprocessing_batch_size
preprocessing_num_workers max_samples eval_num_beams ignore_pad_token_for_loss val_size eval_on_each_dataset
packing neat_packing tool_format tokenized_path"""
FINETUNING_ARGS = """freeze_trainable_layers freeze_trainable_modules freeze_extra_modules additional_target
lora_alpha lora_dropout lora_rank lora_target loraplus_lr_ratio loraplus_lr_embedding use_rslora use_dora
pissa_init pissa_iter pissa_convert create_new_adapter module_dropout oft_rank oft_block_size oft_target
pref_beta pref_ftx pref_bco_weight pref_loss dpo_label_smoothing kto_chosen_weight kto_rejected_weight
simpo_gamma ppo_buffer_size ppo_epochs ppo_score_norm ppo_target ppo_whiten_rewards ref_model ref_model_adapters
ref_model_quantization_bit reward_model reward_model_adapters reward_model_quantization_bit reward_model_type
ld_alpha use_galore galore_target galore_rank galore_update_interval galore_scale galore_proj_type
galore_layerwise use_apollo apollo_target apollo_rank apollo_update_interval apollo_scale apollo_proj
apollo_proj_type apollo_scale_type apollo_layerwise apollo_scale_front use_badam badam_mode badam_start_block
badam_switch_mode badam_switch_interval badam_update_ratio badam_mask_mode badam_verbose use_swanlab
swanlab_project swanlab_workspace swanlab_run_name swanlab_mode swanlab_api_key swanlab_logdir
swanlab_lark_webhook_url swanlab_lark_secret pure_bf16 stage finetuning_type use_llama_pro use_adam_mini
use_mca use_muon use_dft_loss use_asft_loss asft_alpha use_eaft_loss freeze_vision_tower
freeze_multi_modal_projector freeze_language_model compute_accuracy disable_shuffling early_stopping_steps
plot_loss include_effective_tokens_per_second"""
TRAINING_ARGS = """ray_run_name ray_storage_path ray_storage_filesystem ray_num_workers resources_per_worker
placement_strategy ray_init_kwargs overwrite_output_dir sortish_sampler predict_with_generate
generation_max_length generation_num_beams generation_config warmup_ratio group_by_length logging_dir
save_safetensors include_tokens_per_second fsdp_transformer_layer_cls_to_wrap"""
GENERATING_EVAL_ARGS = """do_sample temperature top_p top_k num_beams max_length max_new_tokens repetition_penalty
length_penalty skip_special_tokens default_system enable_thinking task task_dir batch_size seed lang n_shot
save_dir download_mode"""
# use_mca: true hands TrainingArguments to mcore_adapter (alibaba/ROLL, mcore_adapter/src/mcore_adapter/
# training_args.py): the fields of its DistributingParallelArguments and MegatronArguments in every revision, and
# LLaMA-Factory's own megatron arguments
MEGATRON_ARGS = """account_for_embedding_in_pipeline_split
account_for_loss_in_pipeline_split accumulate_allreduce_grads_in_fp32
additional_configs apply_rope_fusion bias_activation_fusion calculate_per_token_loss check_for_nan_in_loss_and_grad
ckpt_d2h_non_blocking ckpt_format compile_warmup context_parallel_size cross_entropy_loss_fusion cuda_graph_impl
cuda_graph_scope ddp_average_in_collective ddp_bucket_size delay_grad_reduce distrib_optim_fully_reshardable
distrib_optim_fully_reshardable_mem_efficient distribute_saved_activations expert_model_parallel_size
expert_tensor_parallel_size export_hf_on_finish extra_config fp8 fp8_amax_compute_algo fp8_amax_history_len
fp8_dot_product_attention fp8_interval fp8_margin fp8_multi_head_attention fp8_param fp8_recipe fp8_wgrad
masked_softmax_fusion megatron_pretrained_checkpoint mixed_precision moe_aux_loss_coeff moe_enable_routing_replay
moe_expert_capacity_factor moe_grouped_gemm moe_layer_recompute moe_pad_expert_input_to_capacity moe_router_dtype
moe_shared_expert_overlap moe_token_dispatcher_type moe_token_drop_policy mtp_num_layers optimizer
optimizer_cpu_offload optimizer_offload_fraction overlap_grad_reduce overlap_p2p_comm overlap_param_gather
pipeline_model_parallel_layout pipeline_model_parallel_size recompute_granularity recompute_method recompute_modules
recompute_num_layers save_hf_model save_merged_model sequence_packing sequence_parallel tensor_model_parallel_size
transformer_impl use_distributed_optimizer use_packed_sequences variable_seq_lengths
virtual_pipeline_model_parallel_size"""

STRONG = frozenset({"stage", "finetuning_type", "cutoff_len", "template", "lora_target", "lora_rank", "pref_beta",
                    "pref_loss", "quantization_bit", "infer_backend", "export_dir", "use_kt", "flash_attn",
                    "plot_loss", "dataset_dir", "max_samples", "val_size", "neat_packing", "disable_shuffling",
                    "adapter_name_or_path", "overwrite_cache", "ddp_timeout", "export_size"})
WEAK = frozenset({"model_name_or_path", "dataset", "preprocessing_num_workers", "trust_remote_code", "packing"})

STAGES = {"pt": "pretrain", "sft": "sft", "rm": "reward", "ppo": "ppo", "dpo": "dpo", "kto": "kto"}
FLASH_ATTN = {"fa2": "flash_attention_2", "fa3": "flash_attention_3", "sdpa": "sdpa", "disabled": "eager",
              "auto": "auto"}


@cache
def keyspace() -> Keyspace:
    """The listed arguments, the newest release's, and transformers' TrainingArguments; an argument only older
    releases had, or a TrainingArguments field transformers dropped, is a removal judged by removal_judge."""
    history = KeyHistory.load()
    listed = set(" ".join((MODEL_ARGS, DATA_ARGS, FINETUNING_ARGS, TRAINING_ARGS, GENERATING_EVAL_ARGS,
                           MEGATRON_ARGS)).split())
    newest = history.fields_in("llamafactory", history.newest("llamafactory"), CLASSES)
    older = history.ever("llamafactory", CLASSES) - newest
    dropped = history.ever("transformers", TA) - hf.training_argument_fields() - newest
    removed = {k: Moved(None, "an argument of earlier LLaMA-Factory releases") for k in sorted(older)}
    # a TrainingArguments field transformers renamed keeps its new name in the advice (evaluation_strategy ->
    # eval_strategy: removing it would switch evaluation off)
    renamed = {k: hf.LEGACY_RENAMED[k] for k in sorted(dropped - older) if k in hf.LEGACY_RENAMED}
    removed.update({k: hf.LEGACY_DEPRECATED.get(k) or Moved(None, "a TrainingArguments field of earlier "
                                                                  "transformers releases")
                    for k in sorted(dropped - older - set(renamed))})
    known = (listed | newest | hf.training_argument_fields()) - set(removed) - set(renamed)
    return Keyspace(known=frozenset(known), renamed=renamed, deprecated=removed)


def removal_judge(pins: Pins, history: KeyHistory, fork: bool = True):
    """key -> Removal under *pins*: an LLaMA-Factory argument by the llamafactory pin; a TrainingArguments field
    by the transformers releases both the transformers pin and the range of the llamafactory release a fresh install
    of the pins gets take (the newest llamafactory's range when nothing pins it). A field every allowed transformers
    has is no finding: the strict parser takes it until an upgrade those pins forbid. A *fork* (the repository is
    LLaMA-Factory's own copy) runs with its own transformers pin alone."""
    from seqprof.config.key_history import range_allows_minor

    lf = history.allowed("llamafactory", pins)
    # a checkout's own version (setup.py) names the arguments it has, but its requirements, not the release's
    # metadata, bound its transformers
    own_pin = lf is not None and bool(lf) and not any(p.own for p in pins.of("llamafactory"))
    releases = [_installed_release(lf, pins, history)] if own_pin else [history.newest("llamafactory")]
    ranges = {v: history.requires("llamafactory", v, "transformers") or "" for v in releases}
    runs_with = [t for t in history.versions("transformers")  # a minor whose .0 the range takes: <=5.6.0 is 5.6
                 if any(range_allows_minor(r, t) for r in ranges.values())]
    named = ", ".join(sorted({f"transformers{r}" if r else "any transformers" for r in ranges.values()}))
    installs = f"llamafactory {releases[0]}" + (f", which {pins.describe('llamafactory')} installs," if own_pin else "")
    why = f"{named} (what {installs} requires)"
    installed = pins.vcs("llamafactory")
    unseen_fork = installed if installed is not None and installed.fork else None

    def judge(key: str) -> Removal | None:
        if key in history.ever("llamafactory", CLASSES):
            return history.removal("llamafactory", key, CLASSES, pins)
        # the project's transformers pin within what the llamafactory release installs with; the release's range
        # alone when transformers is unpinned, pinned to a commit, or pinned to nothing the history knows
        # a fork of LLaMA-Factory (*fork*: its setup.py / pyproject.toml names it llamafactory) that pins transformers
        # installs its own transformers pin: the assumed release's range is only a guess at a different copy; a
        # project of its own that pins transformers beside `pip install llamafactory` gets both bounds
        # a project whose files never name llamafactory runs a copy seqprof cannot date (SaturnAura/iGFT's vendored
        # third_party/LLaMA-Factory v0.7.1.dev0): the newest release's range bounding its transformers is a guess
        pinned = list(history.allowed("transformers", pins) or ())
        both = [t for t in pinned if t in runs_with] if own_pin or not fork else pinned
        guessed = bool(both) and not own_pin and not fork and not pins.pins.get("llamafactory")
        found = history.removal_among("transformers", key, TA, both or runs_with,
                                      (f"{pins.describe('transformers')} with {why}" if own_pin or guessed else
                                       pins.describe("transformers")) if both else why)
        if found is None or (found.verdict == "warning" and "still has it" in found.detail):
            return None  # every transformers the pins (or the llamafactory release) allow has it: it works
        if unseen_fork is not None and not pinned and key in keyspace().renamed:  # the fork's own requirements
            # bound transformers, and a fork lags upstream (mlfoundations/llama-factory: <=4.56.1 when 0.9.5 allowed
            # 5.6): the new name may not exist there yet. A key deprecated long before (fsdp_transformer_layer_cls_
            # to_wrap) warns on every release a fork of its era runs, and stays a finding
            return Removal(found.package, found.removed_in, "unknown",
                           f"removed in {found.removed_in}; LLaMA-Factory is installed from a fork, "
                           f"{unseen_fork.fork} ({unseen_fork.source.split(' (')[0]}), whose own requirements bound "
                           "transformers, and seqprof cannot see them")
        if guessed:  # an error only where no release the project's own pin allows has it (websight-v2's >=4.57);
            # what pip installs beside the copy depends on that copy's own requirements, which seqprof cannot see
            lacking = not set(pinned) & history.having("transformers", key, TA)
            alone = history.removal_among("transformers", key, TA, pinned, pins.describe("transformers")) \
                if lacking else None
            return alone or Removal(found.package, found.removed_in, "assumed", found.detail)
        return found if both or own_pin else Removal(found.package, found.removed_in, "assumed", found.detail)
    return judge


def _installed_release(allowed: list[str], pins: Pins, history: KeyHistory) -> str:
    """The llamafactory release a fresh install of *pins* gets: pip takes the newest one the pins allow whose own
    transformers range meets the project's transformers pin (`llamafactory>=0.8.0` is 0.9.5, which caps
    transformers at 5.6.0, not the uncapped range some 0.8 release had)."""
    from packaging.specifiers import SpecifierSet

    pinned = history.allowed("transformers", pins)
    for release in reversed(allowed):
        spec = SpecifierSet(history.requires("llamafactory", release, "transformers") or "")
        if not pinned or any(spec.contains(t) for t in pinned):
            return release
    return allowed[-1]


# a training run names its data and what to train (data_args.py dataset, finetuning_args.py stage/finetuning_type,
# template): a file with none of these, whose other keys LLaMA-Factory would mostly refuse, is another project's
# HfArgumentParser YAML that happens to share a key (FastIE's dataset_dir)
CORE = frozenset({"stage", "finetuning_type", "template", "dataset", "cutoff_len", "lora_target", "export_dir",
                  "adapter_name_or_path", "infer_backend"})


def detect(data: Mapping[str, Any]) -> int:
    if is_board(data):  # LLaMA Board's saved form: every key an element id of the web UI
        return 3 * len(data)
    # every LLaMA-Factory argument is a scalar or a list: `template:` as a mapping of prompt pieces is a project's
    # own (zjunlp/LightThinker's compression config, read by its Config.from_file)
    strong = sum(3 for k, v in data.items() if k in STRONG and not isinstance(v, Mapping))
    if not strong:
        return 0
    known = keyspace().known
    foreign = sum(1 for k in data if k not in known)
    if not any(k in CORE for k in data) and foreign > strong // 3:
        return 0
    other_stage = str(data.get("stage")).lower() not in STAGES  # finetuning_args.py: stage is a Literal
    if other_stage and not any(k in CORE for k in data if k != "stage"):
        return 0  # a project's own `stage: stage-5.2-safe-full-5k` label
    if other_stage and not any(k in data for k in ("model_name_or_path", "dataset", "template")) and \
            any(isinstance(v, Mapping) and k not in known for k, v in data.items()):
        return 0  # `stage: grpo` beside LLaMA-Factory's names, with no model, data or template but a section of its
        # own (YJY131248/Chat4Seniors' job spec for its verl platform, verl_platform_config:)
    if foreign >= 3 and 2 * foreign > len(data):  # `stage:` among a project's own keys (_base_, train:, method:)
        return 0
    return strong + sum(1 for k in data if k in WEAK) + sum(1 for k in data if k in hf.training_argument_fields())


def _task(b: Builder) -> tuple[str, str | None]:
    if as_bool(b.raw("do_train")) is True:
        return "train", "do_train"
    if b.present("export_dir"):
        return "export", "export_dir"
    if as_bool(b.raw("do_predict")) is True:
        return "eval", "do_predict"
    if as_bool(b.raw("do_eval")) is True:  # beside training keys and no do_train, a training file that only evaluates
        return ("train", "do_eval") if not b.present("do_train") and _training_key(b) else ("eval", "do_eval")
    if as_bool(b.raw("do_train")) is False:  # the stage's workflow runs, but trains only under do_train
        return "no_training", "do_train"
    if b.present("infer_backend"):
        return "inference", "infer_backend"
    if not b.present("stage"):  # stage defaults to sft: a file of training keys is a training file without it
        trains = _training_key(b)
        return ("train", trains) if trains else ("inference", None)
    return "train", "stage"


def _training_key(b: Builder) -> str | None:
    """The first key of the file that only a training run reads (TRAINING_KEYS), if any."""
    return next((k for k in TRAINING_KEYS if b.present(k)), None)


# keys only a training run reads (AIChat_QingZhou's train_qwen_lora.yaml names no stage: finetuning_args.py's
# default, sft, runs it); an inference or export file has none of them
TRAINING_KEYS = ("num_train_epochs", "max_steps", "learning_rate", "per_device_train_batch_size",
                 "gradient_accumulation_steps")


def build(cfg: LoadedConfig, variant: str | None = None, pins: Pins | None = None) -> DialectResult:
    """Canonical settings of a LLaMA-Factory v0 config; keys judged against *pins* (default: files beside it)."""
    board = is_board(cfg.data)
    if board:  # the arguments the web UI starts the run with; its element ids are the UI's, not keys to check
        cfg = board_arguments(cfg)
    b = Builder(cfg)
    pins = pins if pins is not None else pins_beside(cfg.path)
    # an unpinned LLaMA-Factory beside transformers==4.38.0: pip can only install a release whose own transformers
    # range takes that pin (0.8.0 requires >=4.41.2), so the newest release is not what runs (lijiazheng99's dpo_ftx)
    history = KeyHistory.load()
    stated = pins
    pins = with_dependency_floor(pins, history, "llamafactory", "transformers")
    b.stated("model", "model_name_or_path")
    task, task_key = _task(b)
    if task_key:
        b.derived("task", task, task_key)
    else:
        b.default("task", task, "no do_train, stage or export key: an inference/chat config")
    b.stated("datasets", "dataset", split_list)
    b.stated("max_seq_length", "cutoff_len", as_number)
    b.stated("attn_implementation", "flash_attn", lambda v: FLASH_ATTN.get(str(v), v))
    b.stated("tensor_parallel_size", "tensor_model_parallel_size", as_number)
    b.stated("pipeline_parallel_size", "pipeline_model_parallel_size", as_number)
    b.stated("context_parallel_size", "context_parallel_size", as_number)
    # quantization: bitsandbytes on the fly
    bits = as_number(b.raw("quantization_bit"))
    unquantized = _unusable_quantization_method(cfg, pins) if bits in (4, 8) else None
    if unquantized is not None:  # the model loads unquantized: estimates follow what runs
        b.diagnostics.append(unquantized)
        b.derived("load_in_4bit", False, "quantization_method")
        b.derived("load_in_8bit", False, "quantization_method")
        bits = None
    elif bits == 4:
        b.derived("load_in_4bit", True, "quantization_bit")
    elif bits == 8:
        b.derived("load_in_8bit", True, "quantization_bit")
    if b.raw("quantization_bit") is not None:  # SP420: the project's own copy of the parser may let it through
        from seqprof.config.dialects.llamafactory_fork import fork_lets_through

        let_through = fork_lets_through(_own_parser(cfg.path), cfg.path, QUANTIZED_TRAINING_REFUSED, cfg.data,
                                        {"finetuning_type": "lora"})
        if let_through is not None:
            b.derived("quantized_training_allowed", True, f"the project's own copy of LLaMA-Factory's parser "
                                                          f"({let_through}) does not refuse it")
    refusal = None if board else _evaluation_without_data(cfg, pins)
    if refusal is not None:
        b.derived("evaluation_without_data", refusal[1], refusal[0])
    if task == "train" and task_key != "do_train" and str(b.raw("stage", "sft")).lower() in STAGES and not board \
            and not _launched_with(cfg.path, "do_train") and BASE_FILE_KEY not in cfg.data:
        # (an unknown stage is SP406's; a file that names a base file its loader merges may get do_train there)
        b.derived("training_not_requested", _what_runs_instead(cfg.data), task_key)
    template = None if board else unregistered_template(cfg, pins, stated)
    if template is not None:  # training, export and chat all load the template
        b.diagnostics.append(template)
    if task != "train":
        b.diagnostics.extend(_checked_keys(cfg, pins))
        return b.result()
    stage = str(b.raw("stage", "sft")).lower()
    if b.present("stage") and stage not in STAGES and not carries_llamafactory(cfg.path):
        b.diagnostics.append(ConfigDiagnostic(
            kind="invalid_value", key="stage", file=cfg.path, line=cfg.line("stage") or 1,
            message=f"'stage: {b.raw('stage')}' is no LLaMA-Factory stage: hparams/finetuning_args.py declares "
                    f"stage: Literal[{', '.join(STAGES)}], and train/tuner.py raises \"Unknown task: {stage}.\" "
                    "before training"))
    if b.present("stage"):
        trainer = STAGES.get(stage) or _fork_stage_trainer(cfg.path, stage) or stage
        if trainer == "dpo" and str(b.raw("pref_loss", "sigmoid")).lower() in ("orpo", "simpo"):
            trainer = str(b.raw("pref_loss")).lower()
        b.derived("trainer", trainer, "stage")
    b.default("trainer", "sft", SRC.format("finetuning_args.py: stage='sft'"))
    b.default("max_seq_length", 2048, SRC.format("data_args.py: cutoff_len=2048"))
    b.default("overflow", "truncate", "cutoff_len truncates source and target (data/processor infer_seqlen)")
    # adapter
    ftype = str(b.raw("finetuning_type", "lora")).lower()
    adapter = ("qlora" if bits == 4 else "lora") if ftype == "lora" else None
    if b.present("finetuning_type"):
        b.derived("adapter", adapter, "finetuning_type")
    else:
        b.default("adapter", adapter, SRC.format("finetuning_args.py: finetuning_type='lora'"))
    if ftype == "lora":
        b.stated("lora_r", "lora_rank", as_number)
        b.default("lora_r", 8, SRC.format("finetuning_args.py: lora_rank=8"))
        b.stated("lora_alpha", "lora_alpha", as_number)
        b.default("lora_alpha", 2 * b.value("lora_r"), SRC.format("finetuning_args.py: lora_alpha = lora_rank * 2"))
        b.stated("lora_dropout", "lora_dropout", as_number)
        b.stated("lora_targets", "lora_target", split_list)
        b.default("lora_targets", ["all"], SRC.format("finetuning_args.py: lora_target='all'"))
    b.default("load_in_4bit", False, "quantization_bit unset")
    b.default("load_in_8bit", False, "quantization_bit unset")
    # padding and order
    if as_bool(b.raw("neat_packing")) is True:
        b.derived("padding", "packed", "neat_packing")
    elif as_bool(b.raw("packing")) is True:
        b.derived("padding", "packed", "packing")
    elif stage == "pt" and b.raw("packing") is None:
        b.default("padding", "packed", SRC.format("data_args.py: packing is enabled automatically in pre-training"))
    b.default("padding", "longest", "the SFT collator pads each batch to its longest row (packing defaults off, "
                                    "data_args.py)")
    if as_bool(b.raw("disable_shuffling")) is True:
        b.derived("shuffle", False, "disable_shuffling")
    if as_bool(b.raw("disable_gradient_checkpointing")) is True:
        b.derived("gradient_checkpointing", False, "disable_gradient_checkpointing")
    b.default("gradient_checkpointing", True, "LLaMA-Factory turns gradient checkpointing on unless "
                                              "disable_gradient_checkpointing (model/model_utils/checkpointing.py)")
    if as_bool(b.raw("pure_bf16")) is True:
        b.derived("precision", "bf16", "pure_bf16")
    if as_bool(b.raw("enable_liger_kernel")) is True:
        b.derived("fused_loss", "liger", "enable_liger_kernel")
    samples = as_number(b.raw("max_samples"))
    if isinstance(samples, int) and samples > 0:
        b.derived("max_train_examples", samples * max(1, len(b.value("datasets") or [])), "max_samples")
    hf.apply_training_arguments(b)
    if not board:
        b.diagnostics.extend(_checked_keys(cfg, pins))
        b.diagnostics.extend(hf.warmup_steps_refused(cfg, pins, history))
        b.diagnostics.extend(hf.warmup_ratio_overridden(cfg, pins, history))
        b.diagnostics.extend(refused_save_schedules(cfg, pins, history))
        b.diagnostics.extend(resume_needs_checkpoint(cfg, "llamafactory"))
        b.diagnostics.extend(names_the_release_lacks(cfg, pins, history, llamafactory=True))
        b.diagnostics.extend(warmup_unread(cfg))
    b.default("framework_versions", describe_versions(PACKAGES, pins, history),
              "the llamafactory/transformers versions keys were judged against (seqprof.config.versions)")
    omegaconf, why = _loaded_with_omegaconf(cfg, pins)
    b.default("duplicate_keys_refused", omegaconf, why)
    if omegaconf is False and not board and Path(cfg.path).suffix.lower() in (".yaml", ".yml"):
        b.diagnostics.extend(numbers_left_as_text(cfg, f"LLaMA-Factory ({why}) hands its values on as they are"))
    return b.result()


# hparams/parser.py get_train_args: `(do_eval or do_predict) and eval_dataset is None and val_size < 1e-6` raises
# "Please specify dataset for evaluation." from 0.8.3 (which added eval_dataset; before it `dataset` served both),
# and from 0.9.4 predict_with_generate too ("Please make sure eval_dataset be provided or val_size >1e-6")
EVAL_DATA_REQUIRED_FROM = "0.8.3"
PREDICT_WITH_GENERATE_FROM = "0.9.4"


def _launched_with(config_path: str, *keys: str) -> bool:
    """Whether a launch line naming the config sets one of *keys* itself (`llamafactory-cli train x.yaml
    do_train=true`: the CLI's key=value overrides, hparams/parser.py read_args); one walk of the project for all."""
    from seqprof.config.launches import command_lines

    path = Path(config_path)
    if not path.is_file():
        return False
    setting = re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, keys))})=")
    return any(setting.search(line) for _, _, line in command_lines(project_root(path), path.resolve())[0])


def _what_runs_instead(data: Mapping[str, Any]) -> str:
    """What `llamafactory-cli train` does with a stage and no do_train: TrainingArguments' do_train defaults to
    false and every stage's workflow trains only under it (train/sft/workflow.py `if training_args.do_train:`); an
    eval_strategy other than "no" turns do_eval on (transformers' __post_init__), so the run only evaluates; PPO
    refuses to start (hparams/parser.py: "PPO training does not support evaluation")."""
    if str(data.get("stage", "")).lower() == "ppo":
        return "refuses to start (PPO without do_train: \"PPO training does not support evaluation\")"
    if as_bool(data.get("do_eval")) is True:
        return "only evaluates the untrained model (do_eval: true)"
    strategy = data.get("eval_strategy", data.get("evaluation_strategy"))
    if strategy not in (None, "no", False) and str(strategy).lower() != "no":
        return f"only evaluates the untrained model (eval_strategy: {strategy} turns do_eval on)"
    return "loads the model and data, trains nothing and saves no weights"


def _evaluation_without_data(cfg: LoadedConfig, pins: Pins) -> tuple[str, str] | None:
    """(the key that asks for evaluation, the release range or copy that refuses it) when the file evaluates with
    nothing to evaluate on, in every LLaMA-Factory the project can run: its own copy's parser.py where it carries
    one, else every release its pins allow (unpinned: the newest); a commit pin decides nothing."""
    from packaging.version import Version

    data = cfg.data
    val_size = as_number(data.get("val_size"))
    if data.get("eval_dataset") is not None or isinstance(val_size, (int, float)) and val_size >= 1e-6:
        return None  # (an empty eval_dataset is not None either: data_args.py split_arg makes "" [""])
    asks = [k for k in ("do_eval", "do_predict", "predict_with_generate") if as_bool(data.get(k)) is True]
    # TrainingArguments' __post_init__ turns do_eval on for any strategy but "no" (the older evaluation_strategy is
    # not counted: transformers 4.46 removed it, which SP408 reports)
    strategy = data.get("eval_strategy")
    if strategy not in (None, False) and str(strategy).lower() not in ("no", "none", ""):
        asks.append("eval_strategy")
    if not asks or any(k in data and data[k] is None for k in ("eval_dataset", "val_size")):
        return None  # a template's blank, filled in by whatever writes the file (Anthony843511's recipes/sft.yaml)
    if _launched_with(cfg.path, "eval_dataset", "val_size", "eval_strategy"):
        return None
    own = _own_parser_text(cfg.path)
    if own is not None:
        refuses = "eval_dataset is None and data_args.val_size < 1e-6" in " ".join(own.split())
        generate = "training_args.predict_with_generate) and (" in own
        keys = [k for k in asks if k != "predict_with_generate" or generate]
        return (keys[0], "the project's own LLaMA-Factory copy (hparams/parser.py)") if refuses and keys else None
    history = KeyHistory.load()
    oldest = history.oldest_run("llamafactory", pins)
    if oldest is None or Version(oldest) < Version(EVAL_DATA_REQUIRED_FROM):
        return None
    keys = [k for k in asks if k != "predict_with_generate" or Version(oldest) >= Version(PREDICT_WITH_GENERATE_FROM)]
    which = f"{pins.describe('llamafactory')}" if pins.of("llamafactory") else \
        f"llamafactory {oldest}, which a fresh install gets (no llamafactory pin found),"
    return (keys[0], which) if keys else None


def _own_parser_text(config_path: str) -> str | None:
    """The text of the hparams/parser.py of the LLaMA-Factory copy the config's repository carries, if it does."""
    parser = _own_parser(config_path)
    return source_text(parser) if parser is not None else None


def _own_parser(config_path: str) -> Path | None:
    """The hparams/parser.py of the LLaMA-Factory copy the config's repository carries (a fork of the repository,
    or a copy vendored into it), if it does."""
    return _parser_under(str(project_root(config_path))) if carries_llamafactory(config_path) else None


@cache  # asked by SP420's fork check, the key checks and the evaluation-data check of each config
def _parser_under(root: str) -> Path | None:
    return next((f for f in python_files(Path(root)) if f.name == "parser.py" and f.parent.name == "hparams"
                 and "def get_train_args" in source_text(f)), None)


OMEGACONF_LOAD_FROM = "0.9.4"  # hparams/parser.py read_args: yaml.safe_load before it, OmegaConf.load from it


def _loaded_with_omegaconf(cfg: LoadedConfig, pins: Pins) -> tuple[bool | None, str]:
    """Whether the LLaMA-Factory that runs loads the file with OmegaConf (which refuses a duplicate key and reads
    `5e-5` as a float) or with yaml.safe_load (which keeps a duplicate's last value and `5e-5` as text): a
    checkout's own hparams/parser.py says, else the pinned releases (all before 0.9.4: safe_load), else a fresh
    install (OmegaConf); None for a checkout at a commit seqprof cannot place among releases."""
    from packaging.version import Version

    from seqprof.config.project_fields import project_root

    root = project_root(cfg.path)
    folder = Path(cfg.path).resolve().parent
    for above in (folder, *folder.parents):  # a copy of LLaMA-Factory the config sits in (its examples/)
        parser = above / "src/llamafactory/hparams/parser.py"
        if parser.is_file():
            text = parser.read_text(encoding="utf-8", errors="replace")
            return "OmegaConf.load" in text, f"{parser.relative_to(root).as_posix()} (the copy of LLaMA-Factory it runs)"
        if above == root:
            break
    allowed = KeyHistory.load().allowed("llamafactory", pins)
    if allowed and all(Version(v) < Version(OMEGACONF_LOAD_FROM) for v in allowed):
        return False, f"{pins.describe('llamafactory')}: hparams/parser.py reads the file with yaml.safe_load"
    checkout = pins.vcs("llamafactory")
    if checkout is not None and not checkout.head and not allowed:  # TIGER-AI-Lab/AceCoder's submodule at a417bcf
        return None, (f"{checkout.source}: a commit seqprof cannot place, and releases before {OMEGACONF_LOAD_FROM} "
                      "read the file with yaml.safe_load, later ones with OmegaConf.load")
    return True, f"llamafactory {OMEGACONF_LOAD_FROM} and newer read it with OmegaConf.load (hparams/parser.py)"


QUANTIZED_TRAINING_REFUSED = "Quantization is only compatible with the LoRA"  # parser.py's error (SP420)


# on-the-fly quantization_method values model/model_utils/quantization.py branches on; any other value matches no
# branch and the model loads unquantized. HfArgumentParser.parse_dict checks neither the Literal (<= 0.9.2) nor
# the QuantizationMethod enum (0.9.3 renamed BITS_AND_BYTES = "bitsandbytes" to BNB = "bnb", extras/constants.py)
QUANTIZATION_RENAMED_IN = "0.9.3"
ON_THE_FLY_METHODS = {False: ("bitsandbytes", "hqq", "eetq"), True: ("bnb", "hqq", "eetq")}  # key: >= 0.9.3


# a checkpoint quantized after training, by its name (Qwen/Qwen2-7B-Instruct-AWQ, ...-GPTQ-Int4, unsloth's
# ...-bnb-4bit): its config.json carries a quantization_config, which quantization.py's first branch loads as it is
# ("`quantization_bit` will not affect on the PTQ-quantized models"), whatever quantization_method says
QUANTIZED_CHECKPOINT = re.compile(r"(?i)(?:^|[-_./])(?:awq|gptq|bnb|int4|int8|fp8|4bit|8bit|aqlm|exl2|hqq|eetq)"
                                  r"(?:$|[-_./])")


def _quantized_checkpoint(model: object) -> bool:
    """Whether a model name says its checkpoint is already quantized (QUANTIZED_CHECKPOINT)."""
    return isinstance(model, str) and QUANTIZED_CHECKPOINT.search(model) is not None


def _unusable_quantization_method(cfg: LoadedConfig, pins: Pins) -> ConfigDiagnostic | None:
    """quantization_bit with a quantization_method the release that runs has no branch for (`bitsandbytes` from
    0.9.3 on, `bnb` before it): nothing refuses it, and the 4/8-bit load is silently dropped. Unpinned, the release
    a fresh install gets is judged, as for keys."""
    from packaging.version import Version

    from seqprof.config.versions import pins_beside

    method = cfg.get("quantization_method")
    if not isinstance(method, str) or _quantized_checkpoint(cfg.get("model_name_or_path")):
        return None
    history = KeyHistory.load()
    allowed = history.allowed("llamafactory", pins)
    if framework_fork(cfg.path) is not None and not pins_beside(cfg.path).of("llamafactory"):
        # a checkout of LLaMA-Factory itself at a version nothing states: its own copy decides, whatever release a
        # cap from its dependencies' pins would let pip install (HuuHuy227's fork: transformers<=4.45.0)
        return None
    releases = allowed if allowed else [history.newest("llamafactory")]
    newest = Version(releases[-1]) >= Version(QUANTIZATION_RENAMED_IN)  # what a fresh install of the pins gets
    if method in ON_THE_FLY_METHODS[newest]:
        return None
    older = sorted({v for v in releases if (Version(v) >= Version(QUANTIZATION_RENAMED_IN)) != newest
                    and method in ON_THE_FLY_METHODS[not newest]}, key=Version)
    renamed = {"bitsandbytes": "bnb", "bnb": "bitsandbytes"}.get(method)
    where = pins.describe("llamafactory") if allowed else f"llamafactory unpinned: {releases[0]} assumed"
    if older:  # `llamafactory>=0.9.0`: the old name worked up to 0.9.2; pip installs the newest
        where += f", whose newest release, {releases[-1]}, a fresh install gets"
    return ConfigDiagnostic(
        kind="invalid_value", key="quantization_method", file=cfg.path, line=cfg.line("quantization_method") or 1,
        message=(f"'quantization_method: {method}' is no on-the-fly quantization method of LLaMA-Factory ({where}: "
                 f"{', '.join(ON_THE_FLY_METHODS[newest])}): model/model_utils/quantization.py matches no branch, so "
                 f"the {cfg.get('quantization_bit')}-bit load is silently dropped and the model trains unquantized"
                 + ("; 0.9.3 renamed 'bitsandbytes' to 'bnb'" if renamed else "")
                 + (f" (releases {older[0]}-{older[-1]}, which the pins allow too, took '{method}')" if older else "")),
        suggestion=f"quantization_method: {renamed}" if renamed else None)


def carries_llamafactory(config_path: str) -> bool:
    """The checkout carries its own copy of LLaMA-Factory, whose tuner may dispatch stages of its own (AzureStarz's
    fork runs `stage: lb`, its LangBridge stage, from train/tuner.py; HfArgumentParser.parse_dict does not check
    the Literal)."""
    return any(f.name == "finetuning_args.py" for f in python_files(project_root(config_path)))


# the workflow each LLaMA-Factory stage runs (train/tuner.py _training_function)
WORKFLOW_TRAINERS = {"run_pt": "pretrain", "run_sft": "sft", "run_rm": "reward", "run_ppo": "ppo", "run_dpo": "dpo",
                     "run_kto": "kto"}


def _fork_stage_trainer(config_path: str, stage: str) -> str | None:
    """The trainer of a stage the project's own LLaMA-Factory copy adds, where its tuner.py hands that stage to one
    of the released workflows (Stycoo/SLM-Reasoning's `elif finetuning_args.stage == "completion_dpo":
    run_dpo(...)`); None where it runs a workflow of its own (run_multi_sft), which keeps the stage's name."""
    import ast

    from seqprof.config.project_fields import parsed_module

    if not Path(config_path).is_file():
        return None
    for file in python_files(project_root(config_path)):
        if file.name != "tuner.py" or file.parent.name != "train":
            continue
        module = parsed_module(file, needs=("stage",))
        for node in ast.walk(module) if module is not None else ():
            if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
                    isinstance(node.test.ops[0], ast.Eq) and getattr(node.test.left, "attr", "") == "stage" and \
                    isinstance(node.test.comparators[0], ast.Constant) and node.test.comparators[0].value == stage:
                calls = [c for line in node.body for c in ast.walk(line) if isinstance(c, ast.Call)]
                name = getattr(calls[0].func, "id", "") if calls else ""
                return WORKFLOW_TRAINERS.get(name)
    return None


def _read_by_a_class_picked_at_run_time(found: list, config_path: str) -> list:
    """Unknown keys that are no near miss of a known one, where the project's own copy of LLaMA-Factory's parser
    adds a class it picks at run time: SP407 notes naming the call (that class, not seqprof, knows its fields)."""
    from dataclasses import replace

    from seqprof.config.dialects.llamafactory_fork import classes_picked_at_run_time

    if not any(d.kind == "unknown_key" and not d.suggestion for d in found):
        return found
    where = classes_picked_at_run_time(_own_parser(config_path), config_path)
    if where is None:
        return found
    return [replace(d, kind="unread_key", message=f"'{d.key}' is declared by none of the classes of the project's "
                                                  f"own copy of LLaMA-Factory, but its parser adds a class it picks at "
                                                  f"run time ({where}): that class may read it")
            if d.kind == "unknown_key" and not d.suggestion else d for d in found]


# mmengine-style inheritance a fork's own loader resolves (wwwbq/LLMfactory's extras/config.py): the named base
# file supplies the keys this one leaves out
BASE_FILE_KEY = "_base_"


MAX_BASE_SEARCH_FILES = 2000  # YAML files looked at for a `_base_` naming a file


def named_as_base(config_path: str) -> str:
    """'configs/qwen0.5b_sft_lora.yaml' when another YAML file of the project names this one in its `_base_` list
    (wwwbq/XTrainer's configs/default.yaml, which its loader merges under the configs that set stage and dataset):
    a fragment whose settings the merged files complete; '' otherwise."""
    from seqprof.config.project_fields import project_root

    path = Path(config_path).resolve()
    if not path.is_file():
        return ""
    return next((where for where in _base_files_named(str(project_root(path))).get(path.name, ())
                 if where != path.relative_to(project_root(path)).as_posix()), "")


_YAML_NAME = re.compile(r"[\w./-]*?([\w.-]+\.ya?ml)(?![\w.-])")


@cache
def _base_files_named(root_name: str) -> dict[str, tuple[str, ...]]:
    """File name -> the project's YAML files (relative to *root_name*) whose text has a `_base_:` key and names it:
    one walk per project, whichever of its configs asks."""
    import os

    from seqprof.config.project_fields import SKIPPED_FOLDERS, source_text

    root = Path(root_name)
    key = re.compile(rf"^\s*{re.escape(BASE_FILE_KEY)}\s*:", re.M)
    out: dict[str, list[str]] = {}
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(names):
            if not name.endswith((".yaml", ".yml")) or seen >= MAX_BASE_SEARCH_FILES:
                continue
            seen += 1
            text = source_text(Path(folder) / name)
            if key.search(text):
                where = (Path(folder) / name).relative_to(root).as_posix()
                for named in dict.fromkeys(m.group(1) for m in _YAML_NAME.finditer(text)):
                    out.setdefault(named, []).append(where)
    return {name: tuple(files) for name, files in out.items()}


def _checked_keys(cfg: LoadedConfig, pins: Pins) -> list:
    """Key diagnostics; a key a dataclass of the config's own repository declares (a repo carrying its own copy of
    LLaMA-Factory, whose hparams/*.py are HfArgumentParser dataclasses) is a note naming it."""
    history = KeyHistory.load()
    # its own copy: a fork (named llamafactory), or a pin no release matches (Flexora's vendored 0.8.2.dev0)
    judge = removal_judge(pins, history, fork=framework_fork(cfg.path) is not None or bool(pins.of("llamafactory")))
    found = check_keys(cfg, keyspace(), dialect_label=LABEL, removal=judge,
                       assumption=assumed(["llamafactory"], pins, history))
    own = history.ever("llamafactory", CLASSES)  # a TrainingArguments field every transformers it runs with has:
    found = [d for d in found if d.kind not in ("deprecated_key", "renamed_key") or d.key in own
             or judge(d.key) is not None]  # fine
    found = read_by_own_copy(found, cfg.path, NAME, LABEL, own_argument=own.__contains__)
    found = _read_by_a_class_picked_at_run_time(found, cfg.path)
    installed = pins.vcs("llamafactory")
    if installed is not None and installed.fork and framework_fork(cfg.path) is None:
        # the fork's own arguments, which seqprof cannot see (Qihoo360/360-LLaMA-Factory, orange0629's README's)
        found = read_by_fork(found, Fork(NAME, installed.source, installed=installed.fork), NAME, LABEL,
                             own_argument=own.__contains__)
    # the copy's own code may take a key out before parsing the rest (nilsblank's tuner.py: args.pop("evaluators"));
    # a wrapper script may pop a section of its own before handing the rest on (NVIDIA's llm_qat llama_factory.py)
    return read_by_project_code(found, cfg.path, LABEL, taken_out=not carries_llamafactory(cfg.path))
