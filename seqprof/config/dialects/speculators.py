"""vLLM speculators training arguments (scripts/train.py of vllm-project/speculators) as YAML.

speculators takes command-line flags; a YAML holding them (``total_seq_len: 8192`` or
``total-seq-len: 8192``) is read with dashes and underscores treated alike.

Mapping and defaults (scripts/train.py argparse @ vllm-project/speculators):
- model <- verifier_name_or_path (the target/verifier model); model_config_path <-
  draft_config or from_pretrained;
- token_budget <- total_seq_len (default 8192): MultipackDistributedBatchSamplerV2 packs
  samples into batches of at most that many tokens, so padding is "packed";
- draft_strategy <- speculator_type (eagle3); block_size <- block_size (DFlash, 8);
  num_anchors <- max_anchors (DFlash/DSpark/P-EAGLE, 3072); ttt_length <- ttt_steps (3);
- num_epochs <- epochs (20); learning_rate <- lr (1e-4); optimizer (muon);
- checkpoints: checkpoint_freq in epochs (1.0: one per epoch; < 1 saves within the epoch);
- precision <- hidden_states_dtype (bfloat16); attention <- draft_attn_impl.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    as_number,
    check_keys,
    link_json,
)
from seqprof.config.loader import LoadedConfig

NAME = "speculators"
LABEL = "speculators' train.py"
SRC = "speculators default (scripts/train.py --{})"

KNOWN = frozenset("""
verifier_name_or_path trust_remote_code speculator_type from_pretrained draft_config dry_run data_path
hidden_states_path vllm_endpoint on_missing on_generate request_timeout max_retries legacy_data save_path epochs lr
train_data_ratio no_resume_from_checkpoint logger total_seq_len log_freq log_dir run_name num_layers draft_arch
draft_hidden_act target_layer_ids token_freq_path draft_vocab_size d2t_path t2d_path mask_token_id ttt_steps
num_speculative_steps ttt_step_loss_decay loss_fn step_weight_beta seed hidden_states_dtype deterministic_cuda
use_off_policy_tokens norm_before_residual embed_requires_grad norm_before_fc fc_norm norm_output block_size
max_anchors dflash_decay_gamma per_position_loss_weight dpace_alpha markov_rank markov_head_type
enable_confidence_head confidence_head_with_markov confidence_head_alpha draft_attn_impl num_depths
down_sample_ratio down_sample_ratio_min sliding_window sliding_window_indices sliding_window_non_causal num_workers
prefetch_factor noise_std checkpoint_freq save_best scheduler_type scheduler_warmup_steps scheduler_warmup_ratio
scheduler_total_steps scheduler_num_cosine_cycles optimizer weight_decay muon_lr muon_momentum muon_weight_decay
muon_ns_steps muon_adjust_lr_fn data_format_version
""".split())


def _norm(data: Mapping[str, Any]) -> set[str]:
    return {str(k).replace("-", "_") for k in data}


def detect(data: Mapping[str, Any]) -> int:
    keys = _norm(data)
    if "verifier_name_or_path" in keys:
        return 20 + len(keys & KNOWN)
    if {"total_seq_len", "speculator_type"} & keys:
        return 10 + len(keys & KNOWN)
    return 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of a speculators training-argument YAML."""
    b = Builder(cfg)

    def key(name: str) -> str:
        dashed = name.replace("_", "-")
        return dashed if dashed in cfg.data and name not in cfg.data else name

    b.default("trainer", "drafter", "speculators trains speculative-decoding draft models")
    b.stated("model", key("verifier_name_or_path"))
    for k in ("draft_config", "from_pretrained"):
        if b.stated("model_config_path", key(k)):
            link_json(b, "model_config", key(k))
    b.stated("draft_strategy", key("speculator_type"))
    b.default("draft_strategy", "eagle3", SRC.format("speculator-type"))
    b.stated("token_budget", key("total_seq_len"), as_number)
    b.default("token_budget", 8192, SRC.format("total-seq-len"))
    b.default("padding", "packed", "MultipackDistributedBatchSamplerV2 packs samples up to total_seq_len tokens")
    b.default("batching", "token_budget", "batches are filled to total_seq_len tokens (multipack sampler)")
    b.default("micro_batch_size", 1, "one packed sequence of total_seq_len tokens per device per step")
    b.stated("num_epochs", key("epochs"), as_number)
    b.default("num_epochs", 20, SRC.format("epochs"))
    b.stated("learning_rate", key("lr"), as_number)
    b.default("learning_rate", 1e-4, SRC.format("lr"))
    b.stated("optimizer", key("optimizer"))
    b.default("optimizer", "muon", SRC.format("optimizer"))
    strategy = str(b.value("draft_strategy")).lower()
    if strategy in ("dflash", "dspark", "peagle"):
        b.stated("num_anchors", key("max_anchors"), as_number)
        b.default("num_anchors", 3072, SRC.format("max-anchors"))
    if strategy in ("dflash", "dspark"):
        b.stated("block_size", key("block_size"), as_number)
        b.default("block_size", 8, SRC.format("block-size"))
    b.stated("ttt_length", key("ttt_steps"), as_number)
    freq = as_number(b.raw(key("checkpoint_freq"), 1.0))
    if isinstance(freq, (int, float)) and freq > 0:
        if b.present(key("checkpoint_freq")):
            if freq < 1:
                b.derived("saves_per_epoch", round(1 / freq, 6), key("checkpoint_freq"))
            b.derived("save_strategy", "steps" if freq < 1 else "epoch", key("checkpoint_freq"))
        b.default("save_strategy", "epoch", SRC.format("checkpoint-freq=1.0 (one checkpoint per epoch)"))
    b.stated("precision", key("hidden_states_dtype"),
             lambda v: {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(str(v), v))
    b.default("precision", "bf16", SRC.format("hidden-states-dtype=bfloat16"))
    b.stated("attn_implementation", key("draft_attn_impl"))
    b.stated("datasets", key("data_path"), lambda v: [v])
    space = Keyspace(known=KNOWN | frozenset(k.replace("_", "-") for k in KNOWN))
    b.diagnostics.extend(check_keys(cfg, space, dialect_label=LABEL))
    return b.result()
