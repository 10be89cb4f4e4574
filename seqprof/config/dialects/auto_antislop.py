"""auto-antislop pipeline YAML (sam-paech/auto-antislop): the ``finetune_*`` keys drive training.

The pipeline file also configures generation, n-gram analysis and vLLM; only the finetune
stage is a training run. core/finetuning.py reads the ``finetune_*`` keys into TRL's DPOConfig
and one of auto-antislop's trainers (``finetune_mode``: ftpo [default], dpo, dpo_final_token,
orpo_final_token, kto_final_token), through Unsloth when ``finetune_use_unsloth`` is set.

Defaults and behaviour (core/finetuning.py, core/ftpo_trainer.py @ sam-paech/auto-antislop):
- FTPO pads to max length, always: ``FTPOTrainer.ftpo_collator`` left-pads every prompt to
  ``args.max_length`` (= finetune_max_seq_length), so every example costs the full length
  whatever its real length — DESIGN.md's first story;
- the DPOConfig gets max_length = finetune_max_seq_length and max_prompt_length = half of it;
- no save_strategy/save_steps are passed, so TRL/transformers' defaults apply (save every
  500 optimizer steps);
- optimizer adamw_8bit with Unsloth, paged_adamw_32bit without; bf16 when loading in 4-bit on
  a GPU that supports it;
- when finetune_base_model_id is null the pipeline's model_id is fine-tuned;
- rows longer than finetune_max_seq_length are filtered out before training.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    as_bool,
    as_number,
    check_keys,
    split_list,
)
from seqprof.config.loader import LoadedConfig

NAME = "auto_antislop"
LABEL = "auto-antislop"
SRC = "auto-antislop core/finetuning.py"

# the pipeline keys of auto-antislop's published configs (configs/*.yaml) and the optional ones
# core/finetuning.py and main.py read with config.get(...)
KNOWN = frozenset("""
experiment_base_dir human_profile_path log_level num_iterations model_id manage_vllm vllm_model_id vllm_port
vllm_hf_token vllm_cuda_visible_devices vllm_gpu_memory_utilization vllm_max_model_len vllm_dtype vllm_extra_args
vllm_env generation_step_enabled generation_api_base_url generation_model_id generation_api_key
generation_max_new_tokens generation_threads generation_max_prompts generation_hf_dataset_name
generation_hf_dataset_split generation_chat_template_model_id generation_logging_level generation_param_chunk_size
generation_param_top_logprobs_count generation_param_temperature generation_param_top_p generation_param_top_k
generation_param_min_p generation_param_timeout generation_param_stop_sequences generation_prompt_template
generation_system_prompt generation_force_backtrack generation_invert_probs generation_ngram_remove_stopwords
generation_ngram_language generation_refusal_detection enable_ngram_ban min_word_len_for_analysis top_k_bigrams
top_k_trigrams dict_bigrams_initial dict_bigrams_subsequent nodict_bigrams_initial nodict_bigrams_subsequent
dict_trigrams_initial dict_trigrams_subsequent nodict_trigrams_initial nodict_trigrams_subsequent
extra_ngrams_to_ban compute_overrep_words top_k_words_for_overrep_analysis dict_overrep_initial
dict_overrep_subsequent nodict_overrep_initial nodict_overrep_subsequent enable_slop_phrase_ban
min_phrase_freq_to_keep top_n_initial_slop_ban top_n_subsequent_slop_ban extra_slop_phrases_to_ban
whitelist_strings extra_regex_patterns finetune_enabled finetune_use_unsloth finetune_mode finetune_ftpo_dataset
finetune_base_model_id finetune_max_seq_length finetune_load_in_4bit finetune_early_stopping_wins
finetune_early_stopping_loss finetune_lora_r finetune_lora_alpha finetune_lora_dropout finetune_weight_decay
finetune_target_modules finetune_freeze_early_layers finetune_n_layers_unfrozen finetune_gradient_checkpointing
finetune_chat_template finetune_batch_size finetune_gradient_accumulation_steps finetune_warmup_ratio
finetune_num_epochs finetune_learning_rate finetune_auto_learning_rate
finetune_auto_learning_rate_adjustment_scaling finetune_beta finetune_output_dir_suffix finetune_save_merged_16bit
finetune_save_gguf_q8_0 finetune_max_train_examples finetune_shuffle_seed
ftpo_sample_rejected_regularisation_strength ftpo_sample_chosen_regularisation_strength
ftpo_sample_min_chosen_tokens ftpo_beta ftpo_lambda_mse_target_agg ftpo_tau_mse_target_agg
ftpo_lambda_mse_target_tokenwise ftpo_tau_mse_target_tokenwise ftpo_lambda_mse ftpo_clip_epsilon_logits
ftpo_loss_mode ftpo_lambda_mse_target ftpo_tau_mse_target finetune_tdpo_dataset
finetune_tdpo_sample_regularisation_strength finetune_quick_test_prompt finetune_debug_tdpo_tokens
finetune_cuda_visible_devices
""".split())

TRAINERS = {"ftpo": "ftpo", "dpo": "dpo", "dpo_final_token": "dpo", "orpo_final_token": "orpo",
            "kto_final_token": "kto", "tdpo": "tdpo", "tdpo-multi": "tdpo"}
# the final-token trainers all feed prompts through a collator that left-pads to max_length
FIXED_PADDING_MODES = frozenset({"ftpo", "tdpo", "tdpo-multi"})


def detect(data: Mapping[str, Any]) -> int:
    # its own finetune_/ftpo_ keys only: Unsloth's get_peft_model kwargs (finetune_vision_layers, finetune_mlp_modules
    # ...) share the prefix
    finetune = sum(1 for k in data if k in KNOWN and k.startswith(("finetune_", "ftpo_")))
    if finetune >= 2 or "finetune_max_seq_length" in data or "finetune_mode" in data:
        return 20 + finetune
    return 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of the finetune stage of an auto-antislop pipeline config."""
    b = Builder(cfg)
    if not b.stated("model", "finetune_base_model_id"):
        b.stated("model", "model_id")
    mode = str(b.raw("finetune_mode", "ftpo")).lower()
    if b.present("finetune_mode"):
        b.derived("trainer", TRAINERS.get(mode, mode), "finetune_mode")
    b.default("trainer", "ftpo", f"finetune_mode defaults to 'ftpo' ({SRC})")
    b.stated("max_seq_length", "finetune_max_seq_length", as_number)
    if b.value("max_seq_length") is not None:
        b.default("max_prompt_length", int(b.value("max_seq_length")) // 2,
                  f"max_prompt_length = finetune_max_seq_length // 2 in the DPOConfig ({SRC})")
    if mode in FIXED_PADDING_MODES:
        b.default("padding", "max_length",
                  "the FTPO collator left-pads every prompt to finetune_max_seq_length, always "
                  "(FTPOTrainer.ftpo_collator, core/ftpo_trainer.py)")
    else:
        b.default("padding", "longest", "TRL's DPO collator pads each batch to its longest pair")
    b.default("overflow", "drop", "rows longer than finetune_max_seq_length are filtered out before training "
                                  "(core/finetuning.py, utils/dataset_helpers.py)")
    b.stated("micro_batch_size", "finetune_batch_size", as_number)
    b.stated("gradient_accumulation_steps", "finetune_gradient_accumulation_steps", as_number)
    b.stated("num_epochs", "finetune_num_epochs", as_number)
    b.stated("learning_rate", "finetune_learning_rate", as_number)
    b.stated("max_train_examples", "finetune_max_train_examples", as_number)
    b.stated("load_in_4bit", "finetune_load_in_4bit", as_bool)
    b.default("load_in_4bit", False, "finetune_load_in_4bit unset")
    b.derived("adapter", "qlora" if b.value("load_in_4bit") is True else "lora",
              "finetune_load_in_4bit" if b.present("finetune_load_in_4bit") else "finetune_lora_r")
    b.stated("lora_r", "finetune_lora_r", as_number)
    b.stated("lora_alpha", "finetune_lora_alpha", as_number)
    b.stated("lora_dropout", "finetune_lora_dropout", as_number)
    b.stated("lora_targets", "finetune_target_modules", split_list)
    b.stated("gradient_checkpointing", "finetune_gradient_checkpointing",
             lambda v: as_bool(v) if not isinstance(v, str) or v.lower() in ("true", "false") else v)
    unsloth = as_bool(b.raw("finetune_use_unsloth"))
    b.default("optimizer", "adamw_8bit" if unsloth is True else "paged_adamw_32bit",
              f"adamw_8bit with Unsloth, paged_adamw_32bit without ({SRC})")
    if b.value("load_in_4bit") is True:
        b.default("precision", "bf16", f"bf16 when loading in 4-bit on a GPU that supports it ({SRC})")
    b.default("save_strategy", "steps", f"no save_strategy is passed to the DPOConfig, so transformers' "
                                        f"'steps' applies ({SRC})")
    b.default("save_steps", 500, f"no save_steps is passed to the DPOConfig, so transformers' 500 applies ({SRC})")
    b.default("shuffle", True, f"the dataset is shuffled with finetune_shuffle_seed and the Trainer reshuffles "
                               f"each epoch ({SRC})")
    ds = b.raw("finetune_ftpo_dataset")
    if isinstance(ds, str) and ds.strip():
        b.stated("datasets", "finetune_ftpo_dataset", lambda v: [v])
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=KNOWN), dialect_label=LABEL))
    return b.result()
