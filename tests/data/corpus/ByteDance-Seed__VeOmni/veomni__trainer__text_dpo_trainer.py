# Copyright 2025 Bytedance Ltd. and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import PreTrainedModel

from ..arguments import MixedPrecisionConfig, VeOmniArguments
from ..data import build_chat_template, build_data_transform
from ..data.data_collator import PostCollator
from ..distributed.clip_grad_norm import veomni_clip_grad_norm
from ..distributed.parallel_state import get_parallel_state, use_parallel_state
from ..distributed.sequence_parallel import gather_outputs
from ..distributed.torch_compile import mark_compile_step_begin
from ..distributed.torch_parallelize import build_parallelize_model
from ..models import build_foundation_model, build_tokenizer
from ..ops.batch_invariant_ops import set_batch_invariant_mode
from ..utils import helper, logging
from ..utils.constants import IGNORE_INDEX
from ..utils.device import synchronize
from .base import BaseTrainer, VeOmniIter


logger = logging.get_logger(__name__)

_NON_MODEL_KEYS = set()


def _build_dpo_labels_list(
    all_labels: torch.Tensor,
    seq_lens: List[int],
    sp_enabled: bool,
) -> List[torch.Tensor]:
    """Split the packed label tensor into per-segment mask targets.

    DPO packs each preference pair as two adjacent segments
    ``[chosen | rejected]``; multiple pairs are packed together. Aligning
    the mask to per-token log-probs depends on whether SP is active:

    * SP off — ``SequenceParallelCollator`` does not run; labels are
      *unshifted*. Apply the causal shift per segment and pad the trailing
      slot with ``IGNORE_INDEX``.
    * SP on — ``SequenceParallelCollator`` already applied a single global
      shift across the packed sequence, so naive slicing leaves each
      segment's tail label holding the *next* segment's head token
      (chosen tail = rejected head). That position would leak the wrong
      target into ``loss_mask`` and pull cross-segment content into the
      chosen / rejected log-prob sums. Force the trailing slot of every
      segment to ``IGNORE_INDEX`` to mask the boundary.

    Args:
        all_labels: flat ``[sum(seq_lens)]`` label tensor, already gathered
            back from SP ranks by the caller when ``sp_enabled``.
        seq_lens: per-segment token counts, in order.
        sp_enabled: whether the SP path applied a global shift upstream.

    Returns:
        A list of per-segment label tensors, each of length ``seq_lens[i]``,
        with the segment boundary masked to ``IGNORE_INDEX``.
    """
    labels_list: List[torch.Tensor] = []
    offset = 0
    if sp_enabled:
        for sl in seq_lens:
            seg = all_labels[offset : offset + sl].clone()
            seg[-1] = IGNORE_INDEX
            labels_list.append(seg)
            offset += sl
    else:
        for sl in seq_lens:
            seq_labels = all_labels[offset : offset + sl]
            labels_list.append(F.pad(seq_labels[1:], (0, 1), value=IGNORE_INDEX))
            offset += sl
    return labels_list


# ================================ DPO Arguments ======================================


@dataclass
class DPOConfig:
    """dpo.* — Direct Preference Optimization hyperparameters."""

    beta: float = field(
        default=0.1,
        metadata={"help": "Temperature parameter for the DPO loss. Controls deviation from the reference model."},
    )
    label_smoothing: float = field(
        default=0.0,
        metadata={"help": "Label smoothing for DPO loss. Non-zero values assume noisy preference labels."},
    )
    reference_free: bool = field(
        default=False,
        metadata={"help": "If True, ignore the reference model and use an implicit uniform reference."},
    )
    loss_type: Literal["sigmoid", "ipo"] = field(
        default="sigmoid",
        metadata={"help": "DPO loss variant: 'sigmoid' for standard DPO, 'ipo' for Identity Preference Optimization."},
    )
    average_log_prob: bool = field(
        default=False,
        metadata={"help": "If True, average log probs per token instead of summing."},
    )
    refer_model_precision: Literal["float32", "bfloat16"] = field(
        default="bfloat16",
        metadata={"help": "Precision of the reference model."},
    )


@dataclass
class VeOmniDPOArguments(VeOmniArguments):
    """Root config for DPO training — extends VeOmniArguments with DPO hyperparameters."""

    dpo_config: DPOConfig = field(default_factory=DPOConfig)


class TextDPOTrainer:
    """Text DPO trainer that composes BaseTrainer with DPO-specific logic."""

    base: BaseTrainer
    reference_model: PreTrainedModel

    def __init__(self, args: VeOmniDPOArguments):
        if args.train.chunk_mbs_config.enable:
            raise ValueError("ChunkMBS is not supported by the DPO trainer yet.")
        self.base = BaseTrainer.__new__(BaseTrainer)
        self.base.args = args

        self.base._setup()  # registers ParallelState("base") before seed
        # All build steps (policy + reference model, optimizer, SP data pipeline)
        # read the current ParallelState via ``get_parallel_state()``, so scope the
        # whole build under this trainer's own state. No-op for the single-model
        # case; keeps each module building over its own mesh once modules build
        # separately.
        with use_parallel_state("base"):
            self.base._build_model()
            self.base._freeze_model_module()

            self._build_model_assets()
            self._build_data_transform()

            self.base._build_dataset()
            self.base._build_collate_fn()
            self.base._build_dataloader()
            self._build_postforward()
            self.base._build_parallelized_model()
            self.base._build_optimizer()
            self.base._build_lr_scheduler()
            self.base._build_training_context()
            self.base._init_callbacks()

            self._build_reference_model()

    def _build_model_assets(self):
        args: VeOmniDPOArguments = self.base.args
        model_config = self.base.model_config
        self.base.tokenizer = build_tokenizer(args.model.tokenizer_path)
        self.base.chat_template = build_chat_template(args.data.chat_template, self.base.tokenizer)
        self.base.model_assets = [model_config, self.base.chat_template]

    def _build_data_transform(self):
        args: VeOmniDPOArguments = self.base.args
        self.base.data_transform = build_data_transform(
            "dpo",
            tokenizer=self.base.tokenizer,
            chat_template=self.base.chat_template,
            max_seq_len=args.data.max_seq_len,
        )

    def _build_postforward(self):
        self.post_forward = PostCollator()

    def _build_reference_model(self):
        """Build and freeze a reference model with the same architecture and FSDP sharding."""
        args: VeOmniDPOArguments = self.base.args
        logger.info_rank0("Building frozen reference model for DPO")

        self.reference_model = build_foundation_model(
            config_path=args.model.config_path,
            weights_path=args.model.model_path,
            torch_dtype=args.dpo_config.refer_model_precision,
            init_device=args.train.init_device,
            ops_implementation=args.model.ops_implementation,
        )

        self.reference_model.requires_grad_(False)

        cpu_load_param_name = None
        if hasattr(self.model, "get_parallel_plan"):
            cpu_load_param_name = getattr(self.model.get_parallel_plan(), "cpu_load_param_name", None)

        self.reference_model = build_parallelize_model(
            self.reference_model,
            init_device=args.train.init_device,
            weights_path=args.model.model_path,
            enable_reshard_after_forward=args.train.accelerator.fsdp_config.reshard_after_forward,
            mixed_precision=MixedPrecisionConfig(enable=False),  # In reference model, we will not use mixed precision
            enable_gradient_checkpointing=False,
            basic_modules=list(
                set(getattr(self.reference_model, "_no_split_modules", None) or []) | set(args.model.basic_modules)
            ),
            enable_reentrant=False,
            enable_forward_prefetch=args.train.accelerator.fsdp_config.forward_prefetch,
            enable_fsdp_offload=args.train.accelerator.fsdp_config.offload,
            broadcast_model_weights_from_rank0=args.train.broadcast_model_weights_from_rank0,
            cpu_load_param_name=cpu_load_param_name,
            max_load_broadcast_size=args.train.accelerator.fsdp_config.max_load_broadcast_size,
        )
        self.reference_model.eval()
        helper.print_device_mem_info("VRAM usage after building reference model")

    @staticmethod
    def dpo_loss(
        policy_chosen_logps: torch.Tensor,
        policy_rejected_logps: torch.Tensor,
        reference_chosen_logps: torch.Tensor,
        reference_rejected_logps: torch.Tensor,
        beta: float,
        label_smoothing: float = 0.0,
        loss_type: str = "sigmoid",
        reference_free: bool = False,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Compute the DPO/IPO loss for a batch of policy and reference model log probabilities.

        Returns:
            (losses, chosen_rewards, rejected_rewards) -- each of shape (batch_size,).
        """
        pi_logratios = policy_chosen_logps - policy_rejected_logps
        ref_logratios = reference_chosen_logps - reference_rejected_logps

        if reference_free:
            ref_logratios = 0

        logits = pi_logratios - ref_logratios

        if loss_type == "ipo":
            losses = (logits - 1 / (2 * beta)) ** 2
        else:
            losses = (
                -F.logsigmoid(beta * logits) * (1 - label_smoothing) - F.logsigmoid(-beta * logits) * label_smoothing
            )

        chosen_rewards = beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = beta * (policy_rejected_logps - reference_rejected_logps).detach()

        return losses, chosen_rewards, rejected_rewards

    def concatenated_forward(self, model: nn.Module, micro_batch: Dict[str, Any]) -> Tuple[torch.Tensor, torch.Tensor]:
        """Run a single forward pass on the packed batch containing chosen+rejected pairs.

        Each DPO sample contributes two consecutive sequences (chosen
        then rejected) to the packed sequence. Activates VeOmni's
        chunked CE log-probs path by passing ``return_log_probs=True``
        to the model — the wrapper installed by
        ``build_foundation_model`` promotes per-token NLL into
        ``output.fused_linear_aux.log_probs`` (actual log-probabilities,
        non-positive) without materializing the ``[B, L, V]`` logits
        tensor that the previous gather-on-logits path OOMed on at long
        context.
        This is the same entry point external integrators (verl) and
        the future PPO trainer use. Even-indexed sequences are
        chosen; odd are rejected.

        Returns:
            (chosen_logps, rejected_logps) each of shape ``(B,)``.
        """
        model_inputs = {k: v for k, v in micro_batch.items() if k not in _NON_MODEL_KEYS}
        outputs = model(**model_inputs, return_log_probs=True, use_cache=False)

        # ``outputs.fused_linear_aux.log_probs`` is shape [1, packed_L]
        # (actual log-probabilities; sign already flipped). PostCollator
        # only knows about ``outputs.logits``, so we replicate its
        # SP-gather + per-seq split inline against the log_probs field.
        # Caller must enter ``use_parallel_state("base")`` so model forward and
        # SP gathers resolve the correct groups.
        log_probs_packed = outputs.fused_linear_aux.log_probs.squeeze(0)  # [packed_L]
        seq_lens = self.post_forward.compute_seqlens_func(micro_batch)
        sp_enabled = get_parallel_state().sp_enabled
        if sp_enabled:
            sp_group = get_parallel_state().sp_group
            log_probs_packed = gather_outputs(log_probs_packed, gather_dim=0, group=sp_group)
            log_probs_packed = log_probs_packed[: sum(seq_lens)]
        log_probs_list = list(log_probs_packed.split(seq_lens, dim=0))

        # Build per-segment label targets aligned to the kernel's per-token
        # log-probs. ``_build_dpo_labels_list`` handles both SP-on (segment
        # boundary masking against the global shift) and SP-off (per-segment
        # causal shift with IGNORE_INDEX trailing pad) — see helper docstring.
        if sp_enabled:
            all_labels = gather_outputs(micro_batch["labels"], gather_dim=-1, group=sp_group)
            all_labels = all_labels.view(-1)[: sum(seq_lens)]
        else:
            all_labels = micro_batch["labels"].view(-1)
        labels_list = _build_dpo_labels_list(all_labels, seq_lens, sp_enabled)

        average_log_prob = getattr(self.base.args, "dpo_config", None) and self.base.args.dpo_config.average_log_prob
        all_logps: List[torch.Tensor] = []
        for seq_log_probs, seq_labels in zip(log_probs_list, labels_list):
            loss_mask = seq_labels != IGNORE_INDEX
            per_token_logps = seq_log_probs.float()  # already true log p; no negation
            if average_log_prob:
                logp = (per_token_logps * loss_mask).sum() / loss_mask.sum().clamp(min=1)
            else:
                logp = (per_token_logps * loss_mask).sum()
            all_logps.append(logp)

        all_logps_t = torch.stack(all_logps)
        return all_logps_t[0::2], all_logps_t[1::2]

    def forward_backward_step(
        self, micro_batch: Dict[str, torch.Tensor]
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        channel_loss_callback = getattr(self.base, "channel_loss_callback", None)
        micro_step_context = (
            channel_loss_callback.micro_step_context(self.base.state, micro_batch)
            if channel_loss_callback is not None
            else nullcontext()
        )
        with micro_step_context:
            args: VeOmniDPOArguments = self.base.args
            dpo_config = args.dpo_config

            micro_batch = self.base.preforward(micro_batch)
            if channel_loss_callback is not None:
                channel_loss_callback.strip_model_inputs(micro_batch)

            with torch.no_grad(), use_parallel_state("base"):
                ref_chosen_logps, ref_rejected_logps = self.concatenated_forward(self.reference_model, micro_batch)

            channel_forward_context = (
                channel_loss_callback.model_forward_context() if channel_loss_callback is not None else nullcontext()
            )
            with (
                use_parallel_state("base"),
                self.base.model_fwd_context,
                set_batch_invariant_mode(args.train.enable_batch_invariant_mode),
                channel_forward_context,
            ):
                policy_chosen_logps, policy_rejected_logps = self.concatenated_forward(self.base.model, micro_batch)

            losses, chosen_rewards, rejected_rewards = self.dpo_loss(
                policy_chosen_logps,
                policy_rejected_logps,
                ref_chosen_logps,
                ref_rejected_logps,
                beta=dpo_config.beta,
                label_smoothing=dpo_config.label_smoothing,
                loss_type=dpo_config.loss_type,
                reference_free=dpo_config.reference_free,
            )

            loss = losses.mean()

            reward_accuracies = (chosen_rewards > rejected_rewards).float().mean()
            loss_dict: Dict[str, torch.Tensor] = {
                "dpo_loss": loss.detach(),
                "chosen_rewards": chosen_rewards.mean().detach(),
                "rejected_rewards": rejected_rewards.mean().detach(),
                "reward_accuracy": reward_accuracies.detach(),
                "reward_margin": (chosen_rewards - rejected_rewards).mean().detach(),
            }

            with (
                use_parallel_state("base"),
                self.base.model_bwd_context,
                set_batch_invariant_mode(args.train.enable_batch_invariant_mode),
            ):
                loss.backward()

            del micro_batch
            return loss, loss_dict

    def on_train_begin(self):
        self.base.on_train_begin()

    def on_train_end(self):
        self.base.on_train_end()

    def on_epoch_begin(self):
        self.base.on_epoch_begin()

    def on_epoch_end(self):
        self.base.on_epoch_end()

    def on_step_begin(self, micro_batches=None):
        # Each DPO preference pair is packed as two consecutive causal-LM
        # segments (chosen, rejected) but carries one source metadata entry.
        self.base.on_step_begin(micro_batches=micro_batches, source_repeat=2)

    def on_step_end(self, loss=None, loss_dict=None, grad_norm=None):
        self.base.on_step_end(loss=loss, loss_dict=loss_dict, grad_norm=grad_norm)

    def train_step(self, data_iterator: Any) -> Dict[str, float]:
        args: VeOmniDPOArguments = self.base.args
        self.base.state.global_step += 1

        micro_batches: List[Dict[str, Any]] = next(data_iterator)

        self.on_step_begin(micro_batches=micro_batches)

        self.base.sync_before_train_step()

        total_loss = 0.0
        total_loss_dict: Dict[str, float] = defaultdict(float)

        num_micro_steps = len(micro_batches)
        for micro_step, micro_batch in enumerate(micro_batches):
            mark_compile_step_begin(getattr(self.base.model, "_veomni_compile_uses_cuda_graphs", False))
            self.base.model_reshard(micro_step, num_micro_steps)
            self.base._configure_hsdp_allreduce(micro_step, num_micro_steps)
            loss, loss_dict = self.forward_backward_step(micro_batch)

            total_loss += loss.item()
            for k, v in loss_dict.items():
                total_loss_dict[k] += v.item()

        with use_parallel_state("base"):
            grad_norm = veomni_clip_grad_norm(self.base.model, args.train.optimizer.max_grad_norm)

        self.base.optimizer.step()
        self.base.lr_scheduler.step()
        self.base.optimizer.zero_grad()

        self.on_step_end(loss=total_loss, loss_dict=total_loss_dict, grad_norm=grad_norm)

    def train(self):
        args: VeOmniDPOArguments = self.base.args
        self.on_train_begin()
        logger.info(
            f"Rank{args.train.local_rank} Start DPO training. "
            f"Start step: {self.base.start_step}. "
            f"Train steps: {args.train_steps}. "
            f"Start epoch: {self.base.start_epoch}. "
            f"Train epochs: {args.train.num_train_epochs}."
        )

        for epoch in range(self.base.start_epoch, args.train.num_train_epochs):
            if hasattr(self.base.train_dataloader, "set_epoch"):
                self.base.train_dataloader.set_epoch(epoch)
            self.base.state.epoch = epoch

            self.on_epoch_begin()

            # Create a batch generator
            self.base.data_iterator = VeOmniIter(
                self.base.train_dataloader, use_background_prefetcher=args.data.dataloader.use_background_prefetcher
            )

            for _ in range(self.base.start_step, args.train_steps):
                try:
                    self.train_step(self.base.data_iterator)
                except StopIteration:
                    logger.info(f"epoch:{epoch} Dataloader finished with drop_last {args.data.dataloader.drop_last}")
                    break

            self.on_epoch_end()

            self.base.start_step = 0
            helper.print_device_mem_info(f"VRAM usage after epoch {epoch + 1}")
            if args.data.dataloader.use_background_prefetcher:
                self.base.data_iterator.stop()

        self.on_train_end()

        if args.data.dataloader.use_background_prefetcher:
            self.base.data_iterator.stop()

        synchronize()

        self.base.destroy_distributed()
