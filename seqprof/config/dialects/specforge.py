"""SpecForge run config (``specforge train --config x.yaml``): drafter training for speculative decoding.

Keys: SpecForge's pydantic run config (specforge/config/schema.py @ sgl-project/SpecForge,
plus the keys SpecForge's own examples/configs use at a6b6b0230009, newer than the schema read):
sections model, data, training, tracking, profiling, runtime and deployment, plus run_id and
output_dir. Every section is ``extra="forbid"``, so an unknown key anywhere is a start-up error;
all sections are checked. Legacy training keys (deployment_mode, server_urls, metadata_db_path)
are migrated by SpecForge into ``deployment`` and reported as renamed.

Mapping and defaults (schema.py):
- model <- model.target_model_path (the target model whose vocabulary sizes the logits);
  model_config_path <- model.draft_model_config (loaded when the JSON is reachable);
- max_seq_length <- data.max_length (default 2048); micro batch <- training.batch_size (1);
  accumulation <- training.accumulation_steps (1); world size <- deployment.trainer
  nnodes x nproc_per_node (1 x 1);
- draft_strategy <- training.strategy (eagle3 default; dflash, dspark, domino, peagle, ...);
  num_anchors <- training.num_anchors (DFlash family, 512); block_size <-
  model.draft_block_size (DFlash default 16); ttt_length <- training.ttt_length (EAGLE3, 7);
- save_steps <- training.save_interval (default 0: no interval checkpoint);
- precision <- model.torch_dtype (bfloat16); attention <- training.attention_backend
  (flex_attention); fsdp <- training.fsdp_sharding (SHARD_GRAD_OP);
- padding: the EAGLE-lineage collator (DataCollatorWithPadding) pads each batch to its
  longest sample (``max_length = max(item["input_ids"].shape[1])``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seqprof.config.dialects.common import (
    Builder,
    DialectResult,
    Keyspace,
    Moved,
    as_bool,
    as_number,
    check_keys,
    link_json,
    positive_or_missing,
)
from seqprof.config.loader import LoadedConfig

NAME = "specforge"
LABEL = "SpecForge"
SRC = "SpecForge default (specforge/config/schema.py {})"

TOP = frozenset({"model", "data", "training", "tracking", "profiling", "runtime", "deployment", "run_id",
                 "output_dir"})
SECTIONS: Mapping[str, frozenset[str]] = {
    "model": frozenset("""target_model_path draft_model_config draft_checkpoint_path draft_num_hidden_layers
        draft_block_size target_backend shard_target_output input_modality trust_remote_code embedding_key
        lm_head_key vocab_mapping_path load_target_embedding aux_hidden_state_layer_ids torch_dtype cache_dir
        mask_token_id sglang_attention_backend sglang_mem_fraction_static sglang_context_length
        sglang_enable_nccl_nvls sglang_enable_symm_mem sglang_enable_torch_compile sglang_enable_dp_attention
        sglang_enable_dp_lm_head sglang_ep_size sglang_max_running_requests sglang_max_total_tokens
        sglang_disable_radix_cache sglang_mamba_radix_cache_strategy sglang_max_mamba_cache_size
        sglang_moe_runner_backend sglang_page_size sglang_quantization sglang_swa_full_tokens_ratio
        tokenizer_pad_token_id""".split()),
    "data": frozenset("""train_data_path prompts_path hidden_states_path eval_data_path eval_hidden_states_path
        max_length chat_template is_preformatted train_only_last_turn build_dataset_num_proc
        dataloader_num_workers cache_dir cache_key max_prompts""".split()),
    "training": frozenset("""strategy num_epochs max_steps total_steps batch_size accumulation_steps
        fsdp_sharding learning_rate warmup_ratio max_grad_norm ttt_length attention_backend tp_size
        sp_ulysses_size sp_ring_size dist_timeout lk_loss_type kl_scale kl_decay num_anchors loss_decay_gamma
        loss_type dpace_alpha lambda_base_start lambda_base_decay_ratio dspark_ce_loss_alpha dspark_l1_loss_alpha
        dspark_confidence_head_alpha num_depths down_sample_ratio down_sample_ratio_min norm_before_residual
        save_interval eval_interval log_interval max_checkpoints compact_teacher compact_teacher_chunk_size
        resume_from role seed objective_chunk_blocks lr_scheduler prompt_seed""".split()),
    "tracking": frozenset("""report_to wandb_project wandb_name wandb_key wandb_offline wandb_dir swanlab_project
        swanlab_name swanlab_key mlflow_tracking_uri mlflow_experiment_name mlflow_run_name""".split()),
    "profiling": frozenset({"enabled", "start_step", "num_steps", "record_shapes"}),
    "runtime": frozenset("""producer_lease in_flight_high_watermark in_flight_low_watermark
        resident_high_watermark_bytes resident_low_watermark_bytes feature_store_max_resident_bytes
        producer_concurrency""".split()),
    "deployment": frozenset({"mode", "trainer", "disaggregated"}),
    "deployment.trainer": frozenset({"nnodes", "nproc_per_node", "node_rank", "master_addr", "master_port"}),
    "deployment.disaggregated": frozenset("""control_dir consumer_state_dir backend store_root store_id server_urls
        mooncake_metadata_server mooncake_master_server_addr mooncake_local_hostname mooncake_protocol
        mooncake_rdma_devices producer_segment_size client_buffer_size idle_timeout_s peer_wait_timeout_s
        producer_hold_s managed_local""".split()),
}
LEGACY_TRAINING: Mapping[str, Moved] = {
    "deployment_mode": Moved("deployment.mode", "SpecForge migrates it (migrate_legacy_config in schema.py)"),
    "server_urls": Moved("deployment.disaggregated.server_urls", "SpecForge migrates it (schema.py)"),
    "metadata_db_path": Moved("deployment.disaggregated.consumer_state_dir", "SpecForge migrates it (schema.py)"),
}


def detect(data: Mapping[str, Any]) -> int:
    model = data.get("model")
    if not isinstance(model, Mapping):
        return 0
    score = 0
    if "target_model_path" in model:
        score += 15
    if "draft_model_config" in model:
        score += 5
    for section in ("data", "training", "deployment"):
        if isinstance(data.get(section), Mapping):
            score += 2
    return score if score >= 15 else 0


def build(cfg: LoadedConfig, variant: str | None = None) -> DialectResult:
    """Canonical settings of a SpecForge run config."""
    b = Builder(cfg)
    b.default("trainer", "drafter", "SpecForge trains speculative-decoding draft models")
    b.stated("model", "model.target_model_path")
    b.stated("model_config_path", "model.draft_model_config")
    link_json(b, "model_config", "model.draft_model_config")
    b.stated("draft_strategy", "training.strategy")
    b.default("draft_strategy", "eagle3", SRC.format("TrainingConfig.strategy"))
    b.stated("max_seq_length", "data.max_length", as_number)
    b.default("max_seq_length", 2048, SRC.format("DataConfig.max_length"))
    b.stated("micro_batch_size", "training.batch_size", as_number)
    b.default("micro_batch_size", 1, SRC.format("TrainingConfig.batch_size"))
    b.stated("gradient_accumulation_steps", "training.accumulation_steps", as_number)
    b.default("gradient_accumulation_steps", 1, SRC.format("TrainingConfig.accumulation_steps"))
    nnodes = as_number(b.raw("deployment.trainer.nnodes", 1))
    nproc = as_number(b.raw("deployment.trainer.nproc_per_node", 1))
    if isinstance(nnodes, int) and isinstance(nproc, int):
        key = "deployment.trainer.nproc_per_node" if b.present("deployment.trainer.nproc_per_node") else \
            "deployment.trainer.nnodes"
        if b.present(key):
            b.derived("world_size", nnodes * nproc, key)
    b.default("world_size", 1, SRC.format("TrainerDeploymentConfig: nnodes=1, nproc_per_node=1"))
    b.stated("num_epochs", "training.num_epochs", as_number)
    b.default("num_epochs", 1, SRC.format("TrainingConfig.num_epochs"))
    b.first("max_steps", ["training.max_steps", "training.total_steps"], positive_or_missing)
    b.stated("learning_rate", "training.learning_rate", as_number)
    b.stated("num_anchors", "training.num_anchors", as_number)
    if str(b.value("draft_strategy")).lower() not in ("eagle3", "peagle", "mtp"):
        b.default("num_anchors", 512, SRC.format("TrainingConfig.num_anchors (DFlash family)"))
        b.stated("block_size", "model.draft_block_size", as_number)
        b.default("block_size", 16, SRC.format("ModelConfig.draft_block_size (auto-generated DFlash default)"))
    b.stated("ttt_length", "training.ttt_length", as_number)
    b.stated("save_steps", "training.save_interval", as_number)
    b.default("save_steps", 0, SRC.format("TrainingConfig.save_interval=0"))
    b.stated("precision", "model.torch_dtype",
             lambda v: {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(str(v), v))
    b.default("precision", "bf16", SRC.format("ModelConfig.torch_dtype='bfloat16'"))
    b.stated("attn_implementation", "training.attention_backend")
    b.default("attn_implementation", "flex_attention", SRC.format("TrainingConfig.attention_backend"))
    b.stated("fsdp", "training.fsdp_sharding")
    b.default("fsdp", "SHARD_GRAD_OP", SRC.format("TrainingConfig.fsdp_sharding"))
    b.stated("tensor_parallel_size", "training.tp_size", as_number)
    if as_bool(b.raw("training.compact_teacher")) is True:
        b.derived("fused_loss", "chunked", "training.compact_teacher")
    elif b.present("training.objective_chunk_blocks"):
        b.derived("fused_loss", "chunked", "training.objective_chunk_blocks")
    b.first("datasets", ["data.train_data_path", "data.prompts_path", "data.hidden_states_path"], lambda v: [v])
    b.stated("max_train_examples", "data.max_prompts", as_number)
    b.default("padding", "longest", "SpecForge's DataCollatorWithPadding pads each batch to its longest sample")
    b.default("batching", "fixed", "SpecForge batches training.batch_size samples per step")
    # every section forbids extra keys
    b.diagnostics.extend(check_keys(cfg, Keyspace(known=TOP), dialect_label=LABEL))
    for section, known in SECTIONS.items():
        space = Keyspace(known=known, renamed=LEGACY_TRAINING if section == "training" else {})
        b.diagnostics.extend(check_keys(cfg, space, section=section, dialect_label=LABEL))
    return b.result()
