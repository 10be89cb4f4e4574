# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

import sys
import time

from functools import partial
from typing import Any, Dict, List, Optional, Tuple
from warnings import warn
import json
import torch
import torch.nn.functional as F
from omegaconf import DictConfig, ListConfig

from torch import nn
from torch.distributed import destroy_process_group, init_process_group
from torch.optim import Optimizer
from torch.utils.data import DataLoader, DistributedSampler
from torchtune import config, modules, rlhf, training, utils
from torchtune.data import CROSS_ENTROPY_IGNORE_IDX, padded_collate_dpo
from torchtune.datasets import ConcatDataset
from torchtune.modules.tied_linear import TiedLinear
from torchtune.modules.peft import (
    disable_adapter,
    DoRALinear,
    get_adapter_params,
    get_adapter_state_dict,
    get_lora_module_names,
    get_merged_lora_ckpt,
    LoRALinear,
    set_trainable_params,
    validate_missing_and_unexpected_for_lora,
)
from torchtune.recipe_interfaces import FTRecipeInterface
from tqdm import tqdm

log = utils.get_logger("DEBUG")


class LoRADPORecipeDistributed(FTRecipeInterface):
    """
    Distributed LoRA DPO recipe for dense transformer-based LLMs such as Llama2. This recipe supports
    distributed training and can be run on a single node (1 to 8 GPUs). This is based on HF's DPOTrainer
    in the TRL library: https://github.com/huggingface/trl/blob/main/trl/trainer/dpo_trainer.py#L65

    Features:
        - FSDP. Supported using PyTorch's FSDP APIs. CPU offload of parameters, gradients, and optimizer states
            is supported via ``fsdp_cpu_offload``. Resharding of parameters after the forward pass is
            done by default (corresponding to FULL_SHARD sharding strategy), but can be disabled by setting the config
            ``fsdp_reshard_after_forward`` to False (this corresponds to SHARD_GRAD_OP sharding strategy).
            DDP is currently not supported. Training on CPU is not supported.

        - Activation Checkpointing. This can be controlled using the ``activation_checkpointing``
            flag. Activation checkpointing helps reduce the memory footprint since we no longer keep
            activations in memory and instead recompute them during the backward pass. This is especially
            helpful for larger batch sizes when you're memory constrained. But these savings in memory
            come at the cost of training performance. In most cases training can slow-down quite a bit as
            a result of this activation recomputation.

        - Activation Offloading. This can be controlled using the ``enable_activation_offloading``
            flag. Activation offloading is a technique similar to activations checkpointing that helps
            reduce the memory footprint to prevent OOMs on CUDA and enable bigger batches. Where activations
            checkpointing drops the activation in the forward to recompute it later in the backward,
            activations offloading will drop the activation in the forward to the CPU and bring it
            back during the backward pass. As always, there is a tradeoff--these savings in memory can
            come at the cost of training performance and CPU resources. To recover some runtime cost,
            we've added an option to enable offloading on a different stream to permit overlapping with
            the computation. This option is currently only available on PyTorch 2.5 or later and will
            be enabled by default if an acceptable torch version is found. Activation offloading can be
            used in conjunction with activation checkpointing.

        - Precision. Full fp32 and bf16 training are supported. Precision is controlled using the ``dtype``
            flag. When ``dtype=bf16``, all activations, gradients and optimizer states are in bfloat16. In
            most cases this should halve the memory footprint of full precision (fp32) training, without
            loss in model quality (will depend on the model, training data and other settings). For
            GPUs which do not support bfloat16, we fall back to fp32. Mixed precision training and fp16
            precision are currently not supported.

        - Gradient Accumulation. You can simulate larger batch sizes by accumulating gradients. This is
            controlled using the ``gradient_accumulation_steps`` flag.

                Total Batch Size = batch_size * number of GPUs * gradient accumulation steps.

            For example: with batch_size=1, nproc_per_node=2 and gradient_accumulation_steps=32 we get a
            total batch size of 64.

            Gradient accumulation is especially useful when you are memory constrained. In this case,
            accumulating gradients might give you better training speed than enabling activation
            checkpointing.

        - Checkpointing. Model weights are checkpointed both at the end of each epoch and at the end of
            training. Currently we checkpoint both the adapter weights (trainable params only) and the
            complete merged weights (adapter weights added back to the base model). For more details
            please take a look at our LoRA tutorial
            (https://pytorch.org/torchtune/main/tutorials/lora_finetune.html).

            Optimizer State and recipe state (seed, total_epochs, number of epochs run etc) are
            only saved at the end of a given epoch and used in case of resuming training. Resuming
            training is controlled by the ``resume_from_checkpoint`` flag. Mid-epoch checkpointing is
            currently not supported.

            For more details on the checkpointer, please take a look at
            our checkpointer deepdive (https://pytorch.org/torchtune/main/tutorials/checkpointer.html).

        - Logging. Terminal, Disk, WandB and TensorBoard are all supported.

    The following losses are supported in this recipe:
        - :class:`~torchtune.rlhf.loss.DPOLoss`: Direct Preference Optimization (DPO).
        - :class:`~torchtune.rlhf.loss.RSOPLoss`: Rejection Sampling Optimization (RSO).

    For a full list of example configs for this recipe, run ``tune ls`` on the command line. Each config
    has example commands for how to kick-off training.

    Args:
        cfg (DictConfig): OmegaConf object parsed from yaml file

    Raises:
        ValueError: If ``dtype`` is set to fp16.
        ValueError: If world_size is 1
        RuntimeError: If ``dtype`` is set to bf16 and the hardware does not support bf16.
        RuntimeError: If ``enable_activation_offloading`` is True and device is not CUDA.
        RuntimeError: If ``enable_activation_offloading`` is True and ``enable_activation_checkpointing`` is False.
    """

    def __init__(self, cfg: DictConfig) -> None:
        self._device = utils.get_device(device=cfg.device)
        self._dtype = training.get_dtype(cfg.dtype, device=self._device)

        if self._dtype == torch.float16:
            raise ValueError(
                "full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead."
            )

        _, rank = utils.get_world_size_and_rank()

        self._is_rank_zero = rank == 0

        # logging attributes
        self._output_dir = cfg.output_dir
        self._log_every_n_steps = cfg.get("log_every_n_steps", 1)
        self._log_peak_memory_stats = cfg.get("log_peak_memory_stats", False)

        if self._log_peak_memory_stats and self._device.type != "cuda":
            log.info(
                "log_peak_memory_stats was set to True, however, training does not use cuda. Setting log_peak_memory_stats=False."
            )
            self._log_peak_memory_stats = False
        
        self._num_attack_tokens = cfg.get("num_attack_tokens", 10)
        self._attack_token_prefix = cfg.get("attack_token_prefix", "<ATTACK_")
        self._attack_init_token = cfg.get("attack_init_token", "!")
        self._attack_init_tokens = cfg.get("attack_init_tokens", None)

        self._enable_attack_inner_loop = cfg.get("enable_attack_inner_loop", True)
        self._attack_inner_steps = cfg.get("attack_inner_steps", 3)
        self._reset_attack_tokens_each_batch = cfg.get(
            "reset_attack_tokens_each_batch", False
        )
        attacker_objective = cfg.get("attacker_objective", None)
        if attacker_objective is None:
            attacker_objective = (
                "dpo_reference_free"
                if cfg.get("attacker_reference_free", False)
                else "dpo"
            )
        self._attacker_objective = attacker_objective
        valid_attacker_objectives = {
            "dpo",
            "dpo_reference_free",
            "sft_rejected",
        }
        if self._attacker_objective not in valid_attacker_objectives:
            raise ValueError(
                f"Unsupported attacker_objective={self._attacker_objective!r}. "
                f"Expected one of {sorted(valid_attacker_objectives)}."
            )
        self._attacker_optimizer_cfg = cfg.get("attacker_optimizer", cfg.optimizer)
        self._debug = cfg.get("debug", False)
        self._enable_attack_token_diagnostics = cfg.get(
            "log_attack_token_diagnostics", False
        )
        self._attack_probe_max_new_tokens = cfg.get("attack_probe_max_new_tokens", 32)

        # activation checkpointing/offloading
        self._enable_activation_checkpointing = cfg.get(
            "enable_activation_checkpointing", False
        )
        self._enable_activation_offloading = cfg.get(
            "enable_activation_offloading", False
        )
        if self._enable_activation_offloading:
            if self._device.type != "cuda":
                raise RuntimeError(
                    "enable_activation_offloading should only be True when training on CUDA"
                )
            if not self._enable_activation_checkpointing:
                raise RuntimeError(
                    "enable_activation_offloading should only be True when enable_activation_checkpointing is True"
                )
        elif self._enable_activation_checkpointing:
            utils.log_rank_zero(
                log,
                "Hint: enable_activation_checkpointing is True, but enable_activation_offloading isn't. "
                "Enabling activation offloading should reduce memory further.",
            )

        # These attributes constitute the recipe state and are updated by ``load_checkpoint``
        # when ``resume_from_checkpoint`` is ``True``
        self.seed = training.set_seed(
            seed=cfg.seed, debug_mode=cfg.get("cudnn_deterministic_mode", None)
        )
        self.epochs_run = 0
        self.total_epochs = cfg.epochs
        self.max_steps_per_epoch = cfg.max_steps_per_epoch
        self.global_step = 0
        self._resume_from_checkpoint = cfg.resume_from_checkpoint
        self._save_adapter_weights_only = cfg.get("save_adapter_weights_only", False)
        self._gradient_accumulation_steps = cfg.gradient_accumulation_steps

    def load_checkpoint(self, cfg_checkpointer: DictConfig) -> Dict[str, Any]:
        """
        Extract the checkpoint state from file and validate. This includes the
        base model weights. If resume_from_checkpoint is True, this also includes
        the adapter weights and recipe state
        """
        self._checkpointer = config.instantiate(
            cfg_checkpointer,
            should_load_recipe_state=self._resume_from_checkpoint,
        )
        checkpoint_dict = self._checkpointer.load_checkpoint()

        # When resuming from checkpoint for LoRA, the recipe expects the adapter weights
        # and recipe state to be present. The keys should match up with what ``save_checkpoint``
        # used to create these intermediate checkpoints
        if self._resume_from_checkpoint:
            if training.ADAPTER_KEY not in checkpoint_dict:
                raise ValueError(
                    "Adapter weights not found. Please ensure a valid adapter checkpoint is provided."
                )
            # _update_recipe_state will throw an exception if the recipe state is not corrctly loaded
            # no need to check here
            self._update_recipe_state(checkpoint_dict)
        return checkpoint_dict

    def _update_recipe_state(self, ckpt_dict: Dict[str, Any]) -> None:
        """
        Updates the recipe state from checkpoint.
        """
        try:
            self.epochs_run = ckpt_dict[training.EPOCHS_KEY]

            # on mismatch, warn the user and prevent the override
            if self.seed != ckpt_dict[training.SEED_KEY]:
                warn(
                    message=(
                        "Config value for seed does not match the checkpoint value, "
                        f"using the checkpoint value: {ckpt_dict[training.SEED_KEY]}"
                    )
                )
                self.seed = ckpt_dict[training.SEED_KEY]
            if self.max_steps_per_epoch != ckpt_dict[training.MAX_STEPS_KEY]:
                warn(
                    message=(
                        "Config value for max_steps_per_epoch does not match the checkpoint value, "
                        f"using the checkpoint value: {ckpt_dict[training.MAX_STEPS_KEY]}"
                    )
                )
                self.max_steps_per_epoch = ckpt_dict[training.MAX_STEPS_KEY]

            # on mismatch, warn the user but allow the override
            if self.total_epochs != ckpt_dict[training.TOTAL_EPOCHS_KEY]:
                warn(
                    message=(
                        "Config value for total_epochs does not match the checkpoint value, "
                        f"using the config value: {self.total_epochs}"
                    )
                )

        except KeyError as e:
            raise KeyError(
                "Checkpoint does not contain the required keys needed for updating recipe state. "
                "Are you sure you passed in the right recipe checkpoint?"
            ) from e

    def setup(self, cfg: DictConfig) -> None:
        """
        Setup the recipe state. This includes recipe state (if resume_from_checkpoint is True),
        model, tokenizer, loss, optimizer, learning rate scheduler, sampler, and dataloader.
        """
        if self._is_rank_zero:
            self._metric_logger = config.instantiate(cfg.metric_logger)

            # log config with parameter override
            self._metric_logger.log_config(cfg)

        utils.log_rank_zero(log, "metric logger is initialized.")

        checkpoint_dict = self.load_checkpoint(cfg_checkpointer=cfg.checkpointer)

        self._tokenizer = config.instantiate(cfg.tokenizer)
        self._setup_attack_tokens()
        self._model = self._setup_model(
            cfg_model=cfg.model,
            enable_activation_checkpointing=cfg.enable_activation_checkpointing,
            enable_activation_offloading=self._enable_activation_offloading,
            custom_sharded_layers=cfg.get("custom_sharded_layers", None),
            fsdp_cpu_offload=cfg.get("fsdp_cpu_offload", False),
            reshard_after_forward=cfg.get("fsdp_reshard_after_forward", True),
            base_model_state_dict=checkpoint_dict[training.MODEL_KEY],
            lora_weights_state_dict=(
                checkpoint_dict[training.ADAPTER_KEY]
                if self._resume_from_checkpoint
                else None
            ),
        )

        self._defender_optimizer = self._setup_defender_optimizer(
            cfg_optimizer=cfg.optimizer,
            opt_state_dict=(
                checkpoint_dict[training.OPT_KEY]
                if self._resume_from_checkpoint
                else None
            ),
        )
        self._attacker_optimizer = self._setup_attacker_optimizer(
            cfg_optimizer=self._attacker_optimizer_cfg
        )

        self._loss_fn = config.instantiate(cfg.loss)

        utils.log_rank_zero(log, "Loss is initialized.")

        # sampler and dataloader depend on the tokenizer and loss_fn and should be
        # setup after all of these are setup
        self._sampler, self._dataloader = self._setup_data(
            cfg_dataset=cfg.dataset,
            shuffle=cfg.shuffle,
            batch_size=cfg.batch_size,
        )

        # Finally update the recipe state which can only be correctly set after all of the
        # other components have been initialized and updated.

        # Number of training steps in each epoch depends on the number of batches produced
        # by the dataloader and the max_steps_per_epoch param set by the user and is used
        # for logging and tracking training state. This should be computed after the dataloader
        # has been setup
        self._steps_per_epoch = (
            len(self._dataloader) + self._gradient_accumulation_steps - 1
        ) // self._gradient_accumulation_steps
        if (
            self.max_steps_per_epoch is not None
            and self.max_steps_per_epoch < self._steps_per_epoch
        ):
            self._steps_per_epoch = self.max_steps_per_epoch
        self.global_step = self.epochs_run * self._steps_per_epoch

        # Learning rate scheduler can only be set up after number of steps
        # has been computed
        self._lr_scheduler = self._setup_lr_scheduler(
            cfg_lr_scheduler=cfg.lr_scheduler,
            num_training_steps=self.total_epochs * self._steps_per_epoch,
            last_epoch=self.global_step - 1,
        )
    
    def _setup_attack_tokens(self) -> None:
        self._attack_tokens = [
            f"{self._attack_token_prefix}{idx}>"
            for idx in range(self._num_attack_tokens)
        ]
        self._tokenizer.add_tokens(self._attack_tokens)

        self._attack_token_ids = []
        for tok in self._attack_tokens:
            tok_id = self._tokenizer.token_to_id(tok)
            if tok_id is None or tok_id < 0:
                raise RuntimeError(
                    f"Attack token {tok} was not added correctly: got id {tok_id}"
                )
            self._attack_token_ids.append(tok_id)

        if self._attack_init_tokens is not None:
            init_tokens = list(self._attack_init_tokens)
            if len(init_tokens) != self._num_attack_tokens:
                raise RuntimeError(
                    "attack_init_tokens must have exactly "
                    f"{self._num_attack_tokens} entries, got {len(init_tokens)}."
                )

            self._attack_init_token_ids = []
            self._attack_init_token_strings = []
            for init_token in init_tokens:
                init_ids = self._tokenizer.encode(init_token)
                if len(init_ids) != 1:
                    raise RuntimeError(
                        "Each attack_init_tokens entry must tokenize to exactly one token. "
                        f"Got {init_token!r} -> {init_ids}."
                    )
                self._attack_init_token_strings.append(init_token)
                self._attack_init_token_ids.append(init_ids[0])
        else:
            init_ids = self._tokenizer.encode(self._attack_init_token)
            if len(init_ids) == 0:
                raise RuntimeError(
                    f"Attack init token {self._attack_init_token!r} did not tokenize."
                )
            self._attack_init_token_id = init_ids[0]
            self._attack_init_token_ids = [
                self._attack_init_token_id for _ in range(self._num_attack_tokens)
            ]
            self._attack_init_token_strings = [
                self._attack_init_token for _ in range(self._num_attack_tokens)
            ]

        utils.log_rank_zero(log, f"Registered attack tokens: {self._attack_tokens}")
        utils.log_rank_zero(log, f"Attack token ids: {self._attack_token_ids}")
        utils.log_rank_zero(
            log,
            "Attack init tokens: "
            f"{self._attack_init_token_strings}",
        )
        utils.log_rank_zero(
            log,
            f"Attack init token ids: {self._attack_init_token_ids}",
        )

    def _resize_attack_token_embeddings_pre_shard(self, model: nn.Module) -> None:
        old_vocab_size, hidden_dim = model.tok_embeddings.weight.shape
        new_vocab_size = self._tokenizer.vocab_size

        self._old_vocab_size = old_vocab_size

        if new_vocab_size == old_vocab_size:
            self._attack_embedding_param = model.tok_embeddings.weight
            return

        old_embed = model.tok_embeddings
        new_embed = nn.Embedding(
            new_vocab_size,
            hidden_dim,
            device=old_embed.weight.device,
            dtype=old_embed.weight.dtype,
        )

        model.tok_embeddings = new_embed
        model.output = TiedLinear(model.tok_embeddings)
        self._attack_embedding_param = model.tok_embeddings.weight

        utils.log_rank_zero(
            log,
            f"Resized vocab structurally from {old_vocab_size} to {new_vocab_size} before sharding.",
        )
    
    def _setup_defender_optimizer(
        self, cfg_optimizer: DictConfig, opt_state_dict: Optional[Dict[str, Any]] = None
    ) -> Optimizer:
        optimizer = config.instantiate(cfg_optimizer, self._defender_params)

        if opt_state_dict:
            training.load_from_full_optimizer_state_dict(
                self._model,
                optimizer,
                opt_state_dict,
                self._device,
            )

        utils.log_rank_zero(log, "Defender optimizer is initialized.")
        return optimizer
    
    def _setup_attacker_optimizer(
        self, cfg_optimizer: DictConfig
    ) -> Optimizer:
        optimizer = config.instantiate(cfg_optimizer, [self._attack_embedding_param])
        utils.log_rank_zero(log, "Attacker optimizer is initialized.")
        return optimizer
    
    def _reset_attack_token_rows(self) -> None:
        with torch.no_grad():
            attack_param = self._get_live_attack_embedding()
            attack_param[self._attack_token_ids] = self._initial_attack_embedding_rows
            post_reset_delta_norm = (
                attack_param[self._attack_token_ids]
                - self._initial_attack_embedding_rows
            ).norm().detach()
        utils.log_rank_zero(
            log,
            f"attacker_reset global_step={self.global_step} delta_norm={post_reset_delta_norm.item():.6f}",
        )

    def _reset_attack_state(self) -> None:
        self._reset_attack_token_rows()
        self._attacker_optimizer = self._setup_attacker_optimizer(
            cfg_optimizer=self._attacker_optimizer_cfg
        )

    def _mask_attack_embedding_grad(self) -> None:
        grad = self._attack_embedding_param.grad
        if grad is None:
            return

        grad = self._get_attack_tensor_view(grad)

        mask = torch.zeros(grad.size(0), dtype=torch.bool, device=grad.device)
        mask[self._attack_token_ids] = True
        grad[~mask] = 0

    def _clear_defender_grads(self) -> None:
        for param in self._defender_params:
            param.grad = None
    
    def _clear_attack_grads(self) -> None:
        self._attack_embedding_param.grad = None

    def _zero_all_grads(self) -> None:
        self._defender_optimizer.zero_grad(set_to_none=True)
        self._attacker_optimizer.zero_grad(set_to_none=True)

    def _to_local_tensor(self, tensor: torch.Tensor) -> torch.Tensor:
        if hasattr(tensor, "to_local"):
            return tensor.to_local()
        return tensor

    def _get_attack_tensor_view(self, tensor: torch.Tensor) -> torch.Tensor:
        world_size, _ = utils.get_world_size_and_rank()
        if world_size == 1:
            return tensor
        return self._to_local_tensor(tensor)

    def _get_live_attack_embedding(self) -> torch.Tensor:
        weight = self._model.tok_embeddings.weight
        world_size, _ = utils.get_world_size_and_rank()
        if world_size == 1:
            return weight
        return self._to_local_tensor(weight)

    def _mask_attack_token_logits(self, logits: torch.Tensor) -> torch.Tensor:
        masked_logits = logits.clone()
        masked_logits[..., self._attack_token_ids] = torch.finfo(
            masked_logits.dtype
        ).min
        return masked_logits

    def _should_log_attack_probe(self, inner_step: int) -> bool:
        return self._debug

    def _log_attack_token_diagnostics(self, inner_step: int) -> None:
        if not self._enable_attack_token_diagnostics:
            return

        with torch.no_grad():
            attack_param = self._get_live_attack_embedding()
            attack_rows = attack_param[self._attack_token_ids].float()
            initial_rows = self._initial_attack_embedding_rows.float()
            full_embed = attack_param.float()

            distances = torch.cdist(attack_rows, full_embed)
            distances[:, self._attack_token_ids] = float("inf")

            nearest_dists, nearest_ids = distances.min(dim=1)
            per_token_embed_norms = attack_rows.norm(dim=1)
            per_token_delta_norms = (attack_rows - initial_rows).norm(dim=1)

            mean_attack_row = attack_rows.mean(dim=0, keepdim=True)
            mean_initial_row = initial_rows.mean(dim=0, keepdim=True)
            mean_distances = torch.cdist(mean_attack_row, full_embed)
            mean_distances[:, self._attack_token_ids] = float("inf")
            mean_nearest_dist, mean_nearest_id = mean_distances.min(dim=1)
            mean_embed_norm = mean_attack_row.norm()
            mean_delta_norm = (mean_attack_row - mean_initial_row).norm()

        for idx, attack_token_id in enumerate(self._attack_token_ids):
            nearest_token_id = int(nearest_ids[idx].item())
            nearest_token = self._tokenizer.id_to_token(nearest_token_id)
            if nearest_token is None:
                nearest_token = f"<id:{nearest_token_id}>"

            utils.log_rank_zero(
                log,
                "attacker_token_diag "
                f"global_step={self.global_step} "
                f"inner_step={inner_step}/{self._attack_inner_steps} "
                f"attack_token_id={attack_token_id} "
                f"attack_token={json.dumps(self._attack_tokens[idx])} "
                f"embed_norm={per_token_embed_norms[idx].item():.6f} "
                f"delta_norm={per_token_delta_norms[idx].item():.6f} "
                f"nearest_token_id={nearest_token_id} "
                f"nearest_token={json.dumps(nearest_token)} "
                f"nearest_dist={nearest_dists[idx].item():.6f}",
            )

        overall_nearest_token_id = int(mean_nearest_id[0].item())
        overall_nearest_token = self._tokenizer.id_to_token(overall_nearest_token_id)
        if overall_nearest_token is None:
            overall_nearest_token = f"<id:{overall_nearest_token_id}>"

        utils.log_rank_zero(
            log,
            "attacker_token_diag_overall "
            f"global_step={self.global_step} "
            f"inner_step={inner_step}/{self._attack_inner_steps} "
            f"mean_embed_norm={mean_embed_norm.item():.6f} "
            f"mean_delta_norm={mean_delta_norm.item():.6f} "
            f"nearest_token_id={overall_nearest_token_id} "
            f"nearest_token={json.dumps(overall_nearest_token)} "
            f"nearest_dist={mean_nearest_dist[0].item():.6f}",
        )

    def _extract_probe_prompt_ids(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        concatenated_input_ids, concatenated_labels = batch
        chosen_input_ids = concatenated_input_ids[0]
        chosen_labels = concatenated_labels[0]

        response_start = (chosen_labels != CROSS_ENTROPY_IGNORE_IDX).nonzero(
            as_tuple=False
        )
        if response_start.numel() == 0:
            prompt_end = chosen_input_ids.size(0)
        else:
            prompt_end = int(response_start[0].item())

        return chosen_input_ids[:prompt_end].to(self._device)

    def _generate_attack_probe(
        self, prompt_input_ids: torch.Tensor, max_new_tokens: int
    ) -> Tuple[str, str]:
        eos_token_id = getattr(self._tokenizer.tokenizer, "eos_token_id", None)
        generated = prompt_input_ids.unsqueeze(0)

        with torch.no_grad():
            for _ in range(max_new_tokens):
                with self.activations_handling_ctx:
                    logits = self._model(generated)
                logits = self._mask_attack_token_logits(logits)
                next_token = logits[:, -1, :].argmax(dim=-1, keepdim=True)
                generated = torch.cat([generated, next_token], dim=1)
                next_token_id = int(next_token.item())
                if eos_token_id is not None and next_token_id == eos_token_id:
                    break

        prompt_text = self._tokenizer.decode(
            prompt_input_ids.tolist(), skip_special_tokens=False
        )
        generated_text = self._tokenizer.decode(
            generated[0, prompt_input_ids.size(0) :].tolist(),
            skip_special_tokens=False,
        )
        return prompt_text, generated_text

    def _log_attack_probe(
        self, batch: Tuple[torch.Tensor, torch.Tensor], inner_step: int
    ) -> None:
        if not self._should_log_attack_probe(inner_step):
            return

        prompt_input_ids = self._extract_probe_prompt_ids(batch)
        prompt_text, generated_text = self._generate_attack_probe(
            prompt_input_ids, max_new_tokens=self._attack_probe_max_new_tokens
        )
        utils.log_rank_zero(
            log,
            "attacker_probe "
            f"global_step={self.global_step} "
            f"inner_step={inner_step}/{self._attack_inner_steps} "
            f"prompt={json.dumps(prompt_text)} "
            f"generated={json.dumps(generated_text)}",
        )
    
    def _expand_base_state_dict_for_attack_tokens(
        self, base_model_state_dict: Dict[str, Any]
    ) -> Dict[str, Any]:
        embed_key = "tok_embeddings.weight"
        old_embed = base_model_state_dict[embed_key]
        old_vocab_size = old_embed.shape[0]
        new_vocab_size = self._tokenizer.vocab_size

        if new_vocab_size == old_vocab_size:
            return base_model_state_dict

        expanded_state_dict = dict(base_model_state_dict)
        hidden_dim = old_embed.shape[1]

        new_embed = old_embed.new_empty((new_vocab_size, hidden_dim))
        new_embed[:old_vocab_size].copy_(old_embed)

        for attack_id, init_token_id in zip(
            self._attack_token_ids, self._attack_init_token_ids
        ):
            if attack_id < old_vocab_size:
                continue
            new_embed[attack_id].copy_(old_embed[init_token_id])
        
        # TODO
        # dtype of old_embed
        # dtype of new_embed

        expanded_state_dict[embed_key] = new_embed
        return expanded_state_dict

    def _setup_model(
        self,
        cfg_model: DictConfig,
        enable_activation_checkpointing: bool,
        enable_activation_offloading: bool,
        fsdp_cpu_offload: bool,
        reshard_after_forward: bool,
        base_model_state_dict: Dict[str, Any],
        custom_sharded_layers: Optional[List[str]] = None,
        lora_weights_state_dict: Optional[Dict[str, Any]] = None,
    ) -> nn.Module:
        """
        Model initialization has some important considerations:
           a. To minimize GPU peak memory, we initialize the model on meta device with
              the right dtype
           b. All ranks calls ``load_state_dict`` without peaking CPU RAMs since
              full state dicts are loaded with ``torch.load(mmap=True)``
           c. We register (pre-)forward hooks with ``fully_shard`` instead of wrapping `nn.Module`
        """
        self._lora_rank = cfg_model.lora_rank
        self._lora_alpha = cfg_model.lora_alpha
        self._lora_attn_modules = list(cfg_model.lora_attn_modules)
        self._apply_lora_to_mlp = cfg_model.apply_lora_to_mlp
        self._apply_lora_to_output = getattr(cfg_model, "apply_lora_to_output", False)

        init_start = time.perf_counter()

        world_size, _ = utils.get_world_size_and_rank()
        self._use_fsdp = world_size > 1

        utils.log_rank_zero(
            log,
            (
                "FSDP is enabled. Instantiating model and loading checkpoint on Rank 0 ..."
                if self._use_fsdp
                else "Single-process mode detected. Instantiating model without FSDP sharding ..."
            ),
        )

        with training.set_default_dtype(self._dtype), torch.device("meta"):
            model = config.instantiate(cfg_model)
        
        self._resize_attack_token_embeddings_pre_shard(model)

        self.adapter_params = get_adapter_params(model)
        set_trainable_params(model, self.adapter_params)

        model.tok_embeddings.weight.requires_grad = True
        self._attack_embedding_param = model.tok_embeddings.weight

        if enable_activation_checkpointing:
            training.set_activation_checkpointing(
                model, auto_wrap_policy={modules.TransformerSelfAttentionLayer}
            )

        if self._use_fsdp:
            fsdp_shard_conditions = [
                partial(
                    training.get_shard_conditions,
                    names_to_match=custom_sharded_layers,
                )
            ]
            training.shard_model(
                model=model,
                shard_conditions=fsdp_shard_conditions,
                cpu_offload=fsdp_cpu_offload,
                reshard_after_forward=reshard_after_forward,
            )

        if lora_weights_state_dict:
            lora_missing, lora_unexpected = training.load_from_full_model_state_dict(
                model,
                lora_weights_state_dict,
                self._device,
                cpu_offload=fsdp_cpu_offload,
            )
        else:
            lora_missing, lora_unexpected = None, None

        # Initialize LoRA params and RoPE buffers
        with training.set_default_dtype(self._dtype), self._device:
            lora_device = "cpu" if fsdp_cpu_offload else self._device
            for m in model.modules():
                if (
                    isinstance(m, LoRALinear) or isinstance(m, DoRALinear)
                ) and not lora_weights_state_dict:
                    # lora may not be covered in state dict
                    # if finetune for the 1st time
                    m.to_empty(device=lora_device)
                    m.initialize_parameters()
                # RoPE is not covered in state dict
                if hasattr(m, "rope_init"):
                    m.rope_init()

        base_model_state_dict = self._expand_base_state_dict_for_attack_tokens(base_model_state_dict)

        base_missing, base_unexpected = training.load_from_full_model_state_dict(
            model,
            base_model_state_dict,
            self._device,
            cpu_offload=fsdp_cpu_offload,
        )
        is_dora = False
        for m in model.modules():
            if hasattr(m, "initialize_dora_magnitude"):
                is_dora = True
                m.initialize_dora_magnitude()
        if is_dora:
            for m in model.modules():
                if hasattr(m, "initialize_dora_magnitude"):
                    m.initialize_dora_magnitude()
        validate_missing_and_unexpected_for_lora(
            lora_attn_modules=self._lora_attn_modules,
            apply_lora_to_mlp=self._apply_lora_to_mlp,
            apply_lora_to_output=self._apply_lora_to_output,
            base_missing=base_missing,
            base_unexpected=base_unexpected,
            lora_missing=lora_missing,
            lora_unexpected=lora_unexpected,
        )
        # Ensure no params and buffers are on meta device

        # activation offloading
        self.activations_handling_ctx = training.get_act_offloading_ctx_manager(
            model, enable_activation_offloading
        )

        training.validate_no_params_on_meta_device(model)
        utils.log_rank_zero(
            log,
            f"Instantiating model and loading checkpoint took {time.perf_counter() - init_start:.2f} secs",
        )

        self.adapter_params = get_adapter_params(model)
        self._defender_params = list(self.adapter_params.values())
        self._attack_embedding_param = model.tok_embeddings.weight
        local_attack_embedding_param = self._get_attack_tensor_view(
            self._attack_embedding_param
        )
        self._initial_attack_embedding_rows = (
            local_attack_embedding_param.detach()[self._attack_token_ids].clone()
        )
        if self._is_rank_zero:
            memory_stats = training.get_memory_stats(device=self._device)
            training.log_memory_stats(memory_stats)

        # synchronize before training begins
        torch.distributed.barrier()

        return model

    def _setup_defender_optimizer(
        self, cfg_optimizer: DictConfig, opt_state_dict: Optional[Dict[str, Any]] = None
    ) -> Optimizer:
        optimizer = config.instantiate(cfg_optimizer, self._defender_params)
        if opt_state_dict:
            training.load_from_full_optimizer_state_dict(
                self._model,
                optimizer,
                opt_state_dict,
                self._device,
            )

        utils.log_rank_zero(log, "Defender optimizer is initialized.")
        return optimizer

    def _setup_attacker_optimizer(
        self, cfg_optimizer: DictConfig
    ) -> Optimizer:
        optimizer = config.instantiate(cfg_optimizer, [self._attack_embedding_param])
        utils.log_rank_zero(log, "Attacker optimizer is initialized.")
        return optimizer

    def _setup_lr_scheduler(
        self,
        cfg_lr_scheduler: DictConfig,
        num_training_steps: int,
        last_epoch: int,
    ) -> Optimizer:
        lr_scheduler = config.instantiate(
            cfg_lr_scheduler,
            self._defender_optimizer,
            num_training_steps=num_training_steps,
            last_epoch=last_epoch,
        )

        utils.log_rank_zero(log, "Learning rate scheduler is initialized.")
        return lr_scheduler

    def _setup_data(
        self,
        cfg_dataset: DictConfig,
        shuffle: bool,
        batch_size: int,
    ) -> Tuple[DistributedSampler, DataLoader]:
        """
        All data related setup happens here. Currently this recipe only supports the
        DistributedSamplers with Map-style Datasets which fit into memory. Other samplers,
        iterable datasets and streaming datasets are not supported.
        """
        world_size, rank = utils.get_world_size_and_rank()

        if isinstance(cfg_dataset, ListConfig):
            datasets = [
                config.instantiate(single_cfg_dataset, tokenizer=self._tokenizer, num_attack_tokens=self._num_attack_tokens, attack_token_prefix=self._attack_token_prefix)
                for single_cfg_dataset in cfg_dataset
            ]
            ds = ConcatDataset(datasets=datasets)
        else:
            ds = config.instantiate(cfg_dataset, tokenizer=self._tokenizer, num_attack_tokens=self._num_attack_tokens, attack_token_prefix=self._attack_token_prefix)

        sampler = DistributedSampler(
            ds, num_replicas=world_size, rank=rank, shuffle=shuffle, seed=0
        )

        for epoch in range(3):
            sampler.set_epoch(epoch)
            all_indices = [None] * torch.distributed.get_world_size()
            torch.distributed.all_gather_object(all_indices, list(sampler))
            #with open("/storage/home/sizhechen/adv_Meta_SecAlign/data/all_indices_%d.json" % epoch, "w") as f: json.dump(all_indices, f)

        sampler.set_epoch(0)
        dataloader = DataLoader(
            dataset=ds,
            batch_size=batch_size,
            sampler=sampler,
            # dropping last avoids shape issues with compile + flex attention
            drop_last=True,
            collate_fn=partial(
                padded_collate_dpo,
                padding_idx=self._tokenizer.pad_id,
                ignore_idx=CROSS_ENTROPY_IGNORE_IDX,
            ),
        )

        utils.log_rank_zero(log, "Dataset and Sampler are initialized.")

        return sampler, dataloader

    def save_checkpoint(
        self,
        epoch: int,
    ) -> None:
        """
        Checkpoint the state of the recipe. The constructed checkpoint state dict
        contains the following information:
        - Merged weights with key MODEL_KEY
        - Adapter weights with key ADAPTER_KEY
        - Relevant recipe state if training is not complete
        - If the `self._save_adapter_weights_only` option is True, the checkpointer will save only the adapter weights

        Checkpointer will save the merged weights, adapter weights and recipe state in
        different checkpoint files. To correctly resume from training, the adapter weights
        and recipe state must be provided along with the base model weights."""
        # final dict passed onto the checkpointer
        checkpoint_dict = {}

        intermediate_checkpoint = epoch + 1 < self.total_epochs
        # To prevent GPU memory from spiking during checkpoint save,
        # we consolidate the full model and optim state dicts on CPU for rank 0
        cpu_state_dict = training.gather_cpu_state_dict(
            self._model,
            self._is_rank_zero,
            device=self._device,
            adapter_weights_only=self._save_adapter_weights_only,
        )
        if intermediate_checkpoint:
            opt_state_dict = training.get_full_optimizer_state_dict(
                self._model,
                self._defender_optimizer,
                self._is_rank_zero,
                device=self._device,
            )
        else:
            opt_state_dict = None

        # Now that we have the model and opt state dict, create the actual checkpoint dict
        # to be sent to the checkpointer and ultimately written to file
        if self._is_rank_zero:
            if self._save_adapter_weights_only:
                adapter_state_dict = cpu_state_dict
            else:
                # Filter out the adapter keys and weights from the model state dict. These will
                # be saved separately
                adapter_state_dict = get_adapter_state_dict(cpu_state_dict)

                # merge the adapter weights and base weights to create the model checkpoint
                merged_state_dict = get_merged_lora_ckpt(
                    cpu_state_dict,
                    rank=self._lora_rank,
                    alpha=self._lora_alpha,
                )
                checkpoint_dict.update({training.MODEL_KEY: merged_state_dict})
            checkpoint_dict.update({training.ADAPTER_KEY: adapter_state_dict})

            # if training is in-progress, checkpoint the optimizer state and recipe state
            # as well.
            if intermediate_checkpoint:
                checkpoint_dict.update(
                    {
                        training.OPT_KEY: opt_state_dict,
                        training.SEED_KEY: self.seed,
                        training.EPOCHS_KEY: self.epochs_run,
                        training.TOTAL_EPOCHS_KEY: self.total_epochs,
                        training.MAX_STEPS_KEY: self.max_steps_per_epoch,
                    }
                )

            adapter_config = {
                "r": self._lora_rank,
                "lora_alpha": self._lora_alpha,
                "target_modules": get_lora_module_names(
                    self._lora_attn_modules,
                    self._apply_lora_to_mlp,
                    self._apply_lora_to_output,
                ),
                "peft_type": "LORA",
            }
            checkpoint_dict.update({training.ADAPTER_CONFIG: adapter_config})
            self._checkpointer.save_checkpoint(
                checkpoint_dict,
                epoch=epoch,
                intermediate_checkpoint=intermediate_checkpoint,
                adapter_only=self._save_adapter_weights_only,
            )

    def concatenated_forward(
        self, model: nn.Module, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        Run forward pass of the model with chosen and rejected samples concatenated.

        Args:
            model (nn.Module): The model to be used for the forward pass.
            batch (Tuple[torch.Tensor, torch.Tensor]): Tuple of input_ids and labels.

        Returns:
            Tuple of chosen log probs, rejected log probs, chosen logits, rejected logits.
        """
        concatenated_input_ids, concatenated_labels = batch
        concatenated_input_ids = concatenated_input_ids.to(self._device)
        concatenated_labels = concatenated_labels.to(self._device)

        # formed by concatenating an equal number of "chosen" and "rejected".
        len_chosen = concatenated_input_ids.shape[0] // 2

        with self.activations_handling_ctx:
            all_logits = model(concatenated_input_ids)
        all_logits = self._mask_attack_token_logits(all_logits)

        all_log_probs = rlhf.get_batch_log_probs(all_logits, concatenated_labels)

        chosen_log_probs = all_log_probs[:len_chosen]
        rejected_log_probs = all_log_probs[len_chosen:]

        chosen_logits = all_logits[:len_chosen]
        rejected_logits = all_logits[len_chosen:]

        return (chosen_log_probs, rejected_log_probs, chosen_logits, rejected_logits)

    def _compute_dpo_loss(
        self,
        batch: Tuple[torch.Tensor, torch.Tensor],
        flip_preferences: bool = False,
        reference_free: bool = False,
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        (
            reference_chosen_log_probs,
            reference_rejected_log_probs,
        ) = self._run_reference_forward_with_frozen_attack_tokens(batch)

        (
            policy_chosen_log_probs,
            policy_rejected_log_probs,
            policy_chosen_logits,
            policy_rejected_logits,
        ) = self.concatenated_forward(self._model, batch)

        policy_chosen_logits_mean = policy_chosen_logits.detach().mean()
        policy_rejected_logits_mean = policy_rejected_logits.detach().mean()

        del policy_chosen_logits, policy_rejected_logits

        if flip_preferences:
            (
                policy_chosen_log_probs,
                policy_rejected_log_probs,
            ) = (
                policy_rejected_log_probs,
                policy_chosen_log_probs,
            )
            (
                reference_chosen_log_probs,
                reference_rejected_log_probs,
            ) = (
                reference_rejected_log_probs,
                reference_chosen_log_probs,
            )

        if reference_free:
            reference_chosen_log_probs = torch.zeros_like(policy_chosen_log_probs)
            reference_rejected_log_probs = torch.zeros_like(policy_rejected_log_probs)

        loss, chosen_rewards, rejected_rewards = self._loss_fn(
            policy_chosen_log_probs,
            policy_rejected_log_probs,
            reference_chosen_log_probs,
            reference_rejected_log_probs,
        )

        reward_accuracies = (chosen_rewards > rejected_rewards).float()
        loss = loss.mean()

        metrics = {
            "rewards/chosen": chosen_rewards.mean().detach(),
            "rewards/rejected": rejected_rewards.mean().detach(),
            "rewards/accuracies": reward_accuracies.mean().detach(),
            "log_probs/chosen": policy_chosen_log_probs.detach().mean(),
            "log_probs/rejected": policy_rejected_log_probs.detach().mean(),
            "logits/chosen": policy_chosen_logits_mean,
            "logits/rejected": policy_rejected_logits_mean,
            "reference_free": torch.tensor(
                float(reference_free), device=policy_chosen_log_probs.device
            ),
        }

        return loss, metrics

    def _compute_sequence_ce_loss(
        self, logits: torch.Tensor, labels: torch.Tensor
    ) -> torch.Tensor:
        shift_logits = logits[:, :-1, :].contiguous()
        shift_labels = labels[:, 1:].contiguous()

        flat_logits = shift_logits.view(-1, shift_logits.size(-1))
        flat_labels = shift_labels.view(-1)

        return F.cross_entropy(
            flat_logits,
            flat_labels,
            ignore_index=CROSS_ENTROPY_IGNORE_IDX,
            reduction="mean",
        )

    def _compute_attacker_sft_loss(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        (
            policy_chosen_log_probs,
            policy_rejected_log_probs,
            policy_chosen_logits,
            policy_rejected_logits,
        ) = self.concatenated_forward(self._model, batch)

        concatenated_input_ids, concatenated_labels = batch
        concatenated_labels = concatenated_labels.to(self._device)
        len_chosen = concatenated_labels.shape[0] // 2
        rejected_labels = concatenated_labels[len_chosen:]

        loss = self._compute_sequence_ce_loss(policy_rejected_logits, rejected_labels)

        metrics = {
            "rewards/chosen": policy_rejected_log_probs.detach().mean(),
            "rewards/rejected": policy_chosen_log_probs.detach().mean(),
            "rewards/accuracies": (
                policy_rejected_log_probs > policy_chosen_log_probs
            ).float().mean().detach(),
            "log_probs/chosen": policy_rejected_log_probs.detach().mean(),
            "log_probs/rejected": policy_chosen_log_probs.detach().mean(),
            "logits/chosen": policy_rejected_logits.detach().mean(),
            "logits/rejected": policy_chosen_logits.detach().mean(),
            "reference_free": torch.tensor(1.0, device=policy_rejected_log_probs.device),
        }

        return loss, metrics

    def _compute_attacker_loss(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        if self._attacker_objective == "dpo":
            return self._compute_dpo_loss(
                batch,
                flip_preferences=True,
                reference_free=False,
            )
        if self._attacker_objective == "dpo_reference_free":
            return self._compute_dpo_loss(
                batch,
                flip_preferences=True,
                reference_free=True,
            )
        if self._attacker_objective == "sft_rejected":
            return self._compute_attacker_sft_loss(batch)

        raise RuntimeError(
            f"Unreachable attacker objective: {self._attacker_objective!r}"
        )

    def _run_reference_forward_with_frozen_attack_tokens(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            attack_param = self._get_live_attack_embedding()
            current_rows = attack_param[self._attack_token_ids].clone()
            attack_param[self._attack_token_ids] = self._initial_attack_embedding_rows

        try:
            with torch.no_grad(), disable_adapter(self._model):
                (
                    reference_chosen_log_probs,
                    reference_rejected_log_probs,
                    _,
                    _,
                ) = self.concatenated_forward(self._model, batch)
        finally:
            with torch.no_grad():
                attack_param = self._get_live_attack_embedding()
                attack_param[self._attack_token_ids] = current_rows

        return reference_chosen_log_probs, reference_rejected_log_probs
    
    def _run_attacker_inner_loop(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        if self._reset_attack_tokens_each_batch:
            self._reset_attack_state()

        last_metrics: Optional[Dict[str, torch.Tensor]] = None

        was_training = self._model.training
        self._model.eval()

        try:
            with torch.no_grad():
                attack_loss_0, attack_metrics_0 = self._compute_attacker_loss(batch)
                attack_param = self._to_local_tensor(self._attack_embedding_param)
                attack_rows = attack_param[self._attack_token_ids]
                mean_attack_row = attack_rows.mean(dim=0)
                mean_initial_attack_row = self._initial_attack_embedding_rows.mean(dim=0)
                attack_rows_norm = mean_attack_row.norm().detach()
                attack_delta_norm = (
                    mean_attack_row - mean_initial_attack_row
                ).norm().detach()
                attack_reward_margin = (
                    attack_metrics_0["rewards/chosen"]
                    - attack_metrics_0["rewards/rejected"]
                ).detach()

            
            # print dtype of embed_norm and delta_norm

            utils.log_rank_zero(
                log,
                "attacker_inner_loop "
                f"global_step={self.global_step} "
                f"inner_step=0/{self._attack_inner_steps} "
                f"loss={attack_loss_0.detach().item():.6f} "
                f"reward_margin={attack_reward_margin.item():.6f} "
                "grad_norm=nan "
                f"embed_norm={attack_rows_norm.item():.6f} "
                f"delta_norm={attack_delta_norm.item():.6f}",
            )
            self._log_attack_token_diagnostics(inner_step=0)
            self._log_attack_probe(batch, inner_step=0)

            for _ in range(self._attack_inner_steps):
                self._zero_all_grads()

                attack_loss, attack_metrics = self._compute_attacker_loss(batch)
                attack_loss.backward()

                if self._debug:
                    grad = self._attack_embedding_param.grad
                    local_grad = (
                        self._get_attack_tensor_view(grad) if grad is not None else None
                    )
                    utils.log_rank_zero(
                        log,
                        "attacker_debug "
                        f"global_step={self.global_step} "
                        f"inner_step={_ + 1}/{self._attack_inner_steps} "
                        f"requires_grad={self._attack_embedding_param.requires_grad} "
                        f"param_is_meta={self._attack_embedding_param.is_meta} "
                        f"grad_is_none={grad is None} "
                        f"grad_is_meta={getattr(grad, 'is_meta', False) if grad is not None else 'na'} "
                        f"local_grad_is_none={local_grad is None}",
                    )

                self._mask_attack_embedding_grad()
                grad = self._attack_embedding_param.grad
                if grad is not None and not getattr(grad, "is_meta", False):
                    local_grad = self._get_attack_tensor_view(grad)
                    attack_grad_norm = local_grad[self._attack_token_ids].norm().detach()
                else:
                    attack_grad_norm = torch.tensor(float("nan"), device=self._device)
                self._clear_defender_grads()

                self._attacker_optimizer.step()

                with torch.no_grad():
                    attack_param = self._get_attack_tensor_view(
                        self._attack_embedding_param
                    )
                    attack_rows = attack_param[self._attack_token_ids]
                    mean_attack_row = attack_rows.mean(dim=0)
                    mean_initial_attack_row = self._initial_attack_embedding_rows.mean(dim=0)
                    attack_rows_norm = mean_attack_row.norm().detach()
                    attack_delta_norm = (
                        mean_attack_row - mean_initial_attack_row
                    ).norm().detach()
                    attack_reward_margin = (
                        attack_metrics["rewards/chosen"]
                        - attack_metrics["rewards/rejected"]
                    ).detach()

                utils.log_rank_zero(
                    log,
                    "attacker_inner_loop "
                    f"global_step={self.global_step} "
                    f"inner_step={_ + 1}/{self._attack_inner_steps} "
                    f"loss={attack_loss.detach().item():.6f} "
                    f"reward_margin={attack_reward_margin.item():.6f} "
                    f"grad_norm={attack_grad_norm.item():.6f} "
                    f"embed_norm={attack_rows_norm.item():.6f} "
                    f"delta_norm={attack_delta_norm.item():.6f}",
                )
                self._log_attack_token_diagnostics(inner_step=_ + 1)
                self._log_attack_probe(batch, inner_step=_ + 1)
                last_metrics = attack_metrics
        finally:
            if was_training:
                self._model.train()

        if last_metrics is None:
            raise RuntimeError("Attacker inner loop ran zero steps.")

        self._clear_attack_grads()
        return last_metrics
    
    def _run_defender_step(
        self, batch: Tuple[torch.Tensor, torch.Tensor]
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        self._model.train()
        defender_loss, defender_metrics = self._compute_dpo_loss(
            batch, flip_preferences=False
        )
        (defender_loss / self._gradient_accumulation_steps).backward()

        self._clear_attack_grads()

        return defender_loss.detach(), defender_metrics

    def train(self) -> None:
        """
        The core training loop.
        """
        # clean up before training begins
        training.cleanup_before_training()

        world_size, rank = utils.get_world_size_and_rank()

        # zero out the gradients before starting training
        self._zero_all_grads()

        # Initialize tokens count and running loss (for grad accumulation)
        t0 = time.perf_counter()

        # Running metrics
        running_loss = 0
        running_metrics = {
            "rewards/chosen": 0,
            "rewards/rejected": 0,
            "rewards/accuracies": 0,
            "log_probs/chosen": 0,
            "log_probs/rejected": 0,
            "logits/chosen": 0,
            "logits/rejected": 0,
        }
        accum_loss = 0
        accum_metrics = {
            "rewards/chosen": 0,
            "rewards/rejected": 0,
            "rewards/accuracies": 0,
            "log_probs/chosen": 0,
            "log_probs/rejected": 0,
            "logits/chosen": 0,
            "logits/rejected": 0,
        }
        accum_attacker_metrics = None
        accum_microbatches = 0
        num_tokens = 0

        # self.epochs_run should be non-zero when we're resuming from a checkpoint
        for curr_epoch in range(self.epochs_run, self.total_epochs):

            # Update the sampler to ensure data is correctly shuffled across epochs
            # in case shuffle is True
            self._sampler.set_epoch(curr_epoch)

            pbar = tqdm(total=self._steps_per_epoch, disable=not (rank == 0))
            optimizer_steps_in_epoch = 0
            for idx, batch in enumerate(self._dataloader):
                #print(batch[0].shape) # batch size, seq len
                #print(self._tokenizer.decode(batch[0][0].tolist(), skip_special_tokens=False))
                #print(self._tokenizer.decode(batch[0][1].tolist(), skip_special_tokens=False))
                #print(self._tokenizer.decode(batch[0][2].tolist(), skip_special_tokens=False))
                #print(self._tokenizer.decode(batch[0][3].tolist(), skip_special_tokens=False))
                #exit()
                start_time = time.time()
                if (
                    self.max_steps_per_epoch is not None
                    and optimizer_steps_in_epoch == self.max_steps_per_epoch
                ):
                    break

                # batch is input_ids, labels
                num_tokens += torch.tensor(batch[0].numel())

                attacker_metrics = None
                if self._enable_attack_inner_loop:
                    if self._is_rank_zero and self.global_step > 0:
                        print("", flush=True)
                    attacker_metrics = self._run_attacker_inner_loop(batch)

                defender_loss, defender_metrics = self._run_defender_step(batch)

                accum_loss += defender_loss.detach()
                accum_microbatches += 1
                for key in accum_metrics:
                    accum_metrics[key] += defender_metrics[key].detach()
                if attacker_metrics is not None:
                    if accum_attacker_metrics is None:
                        accum_attacker_metrics = {
                            "rewards/chosen": 0,
                            "rewards/rejected": 0,
                            "rewards/accuracies": 0,
                            "log_probs/chosen": 0,
                            "log_probs/rejected": 0,
                            "logits/chosen": 0,
                            "logits/rejected": 0,
                        }
                    for key in accum_attacker_metrics:
                        accum_attacker_metrics[key] += attacker_metrics[key].detach()

                is_last_batch = idx + 1 == len(self._dataloader)
                if (
                    accum_microbatches < self._gradient_accumulation_steps
                    and not is_last_batch
                ):
                    continue

                self._defender_optimizer.step()
                self._lr_scheduler.step()
                self._zero_all_grads()

                running_loss = accum_loss / accum_microbatches
                running_metrics = {
                    key: value / accum_microbatches
                    for key, value in accum_metrics.items()
                }

                if accum_attacker_metrics is not None:
                    running_metrics.update(
                        {
                            "attacker/rewards/chosen": (
                                accum_attacker_metrics["rewards/chosen"]
                                / accum_microbatches
                            ),
                            "attacker/rewards/rejected": (
                                accum_attacker_metrics["rewards/rejected"]
                                / accum_microbatches
                            ),
                            "attacker/rewards/accuracies": (
                                accum_attacker_metrics["rewards/accuracies"]
                                / accum_microbatches
                            ),
                            "attacker/log_probs/chosen": (
                                accum_attacker_metrics["log_probs/chosen"]
                                / accum_microbatches
                            ),
                            "attacker/log_probs/rejected": (
                                accum_attacker_metrics["log_probs/rejected"]
                                / accum_microbatches
                            ),
                            "attacker/logits/chosen": (
                                accum_attacker_metrics["logits/chosen"]
                                / accum_microbatches
                            ),
                            "attacker/logits/rejected": (
                                accum_attacker_metrics["logits/rejected"]
                                / accum_microbatches
                            ),
                        }
                    )

                torch.distributed.all_reduce(running_loss)
                torch.distributed.all_reduce(num_tokens)

                for key in running_metrics:
                    torch.distributed.all_reduce(
                        running_metrics[key], op=torch.distributed.ReduceOp.AVG
                    )

                optimizer_steps_in_epoch += 1
                self.global_step += 1

                loss_to_log = running_loss.item()
                pbar.update(1)
                pbar.set_description(
                    f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}"
                )

                if (
                    self.global_step % self._log_every_n_steps == 0
                    and self._is_rank_zero
                ):
                    time_per_step = time.perf_counter() - t0
                    log_dict = {
                        "loss": loss_to_log,
                        "lr": self._defender_optimizer.param_groups[0]["lr"],
                        "tokens_per_second_per_gpu": num_tokens
                        / (time_per_step * world_size),
                        "rewards/chosen": running_metrics["rewards/chosen"].cpu(),
                        "rewards/rejected": running_metrics[
                            "rewards/rejected"
                        ].cpu(),
                        "rewards/accuracies": running_metrics[
                            "rewards/accuracies"
                        ].cpu(),
                        "rewards/margins": (
                            running_metrics["rewards/chosen"]
                            - running_metrics["rewards/rejected"]
                        ).cpu(),
                        "log_probs/chosen": running_metrics[
                            "log_probs/chosen"
                        ].cpu(),
                        "log_probs/rejected": running_metrics[
                            "log_probs/rejected"
                        ].cpu(),
                        "logits/chosen": running_metrics["logits/chosen"].cpu(),
                        "logits/rejected": running_metrics["logits/rejected"].cpu(),
                    }

                    if attacker_metrics is not None:
                        log_dict.update(
                            {
                                "attacker/rewards/chosen": running_metrics[
                                    "attacker/rewards/chosen"
                                ].cpu(),
                                "attacker/rewards/rejected": running_metrics[
                                    "attacker/rewards/rejected"
                                ].cpu(),
                                "attacker/rewards/accuracies": running_metrics[
                                    "attacker/rewards/accuracies"
                                ].cpu(),
                                "attacker/rewards/margins": (
                                    running_metrics["attacker/rewards/chosen"]
                                    - running_metrics["attacker/rewards/rejected"]
                                ).cpu(),
                                "attacker/log_probs/chosen": running_metrics[
                                    "attacker/log_probs/chosen"
                                ].cpu(),
                                "attacker/log_probs/rejected": running_metrics[
                                    "attacker/log_probs/rejected"
                                ].cpu(),
                                "attacker/logits/chosen": running_metrics[
                                    "attacker/logits/chosen"
                                ].cpu(),
                                "attacker/logits/rejected": running_metrics[
                                    "attacker/logits/rejected"
                                ].cpu(),
                            }
                        )

                    if self._log_peak_memory_stats:
                        log_dict.update(
                            training.get_memory_stats(device=self._device)
                        )
                    self._metric_logger.log_dict(
                        log_dict,
                        step=self.global_step,
                    )

                running_loss = 0
                running_metrics = {key: 0 for key in running_metrics}
                accum_loss = 0
                accum_metrics = {
                    "rewards/chosen": 0,
                    "rewards/rejected": 0,
                    "rewards/accuracies": 0,
                    "log_probs/chosen": 0,
                    "log_probs/rejected": 0,
                    "logits/chosen": 0,
                    "logits/rejected": 0,
                }
                accum_attacker_metrics = None
                accum_microbatches = 0
                num_tokens = 0

                t0 = time.perf_counter()
                #print()
                # self.save_checkpoint(epoch=curr_epoch + (idx + 1) / self._steps_per_epoch)
                #print(time.time() - start_time)
            self.epochs_run += 1
            self.save_checkpoint(epoch=curr_epoch)

    def cleanup(self) -> None:
        if self._is_rank_zero:
            self._metric_logger.close()
        destroy_process_group()


@config.parse
def recipe_main(cfg: DictConfig) -> None:
    """
    Entry point for the recipe.

    Configurable parameters are read in the following order:
        - Parameters specified in config (see available configs through ``tune ls``)
        - Overwritten by arguments from the command-line
    """
    if not training.is_distributed():
        raise RuntimeError(
            "Distributed finetune recipe should be run via a distributed launcher."
            "If using tune CLI, please specify --nnodes 1 and --nproc_per_node [num_gpus]"
        )
    init_process_group("cuda:nccl,cpu:gloo")
    if cfg.get("fsdp_cpu_offload", False):
        # Utilize all available CPU cores for intra-op parallelism. This provides ~2x
        # speed up when benchmarking fused AdamW on CPU
        training.set_torch_num_threads()

    config.log_config(recipe_name="LoRADPORecipeDistributed", cfg=cfg)

    recipe = LoRADPORecipeDistributed(cfg=cfg)
    recipe.setup(cfg=cfg)
    recipe.train()
    recipe.cleanup()


if __name__ == "__main__":
    sys.exit(recipe_main())
