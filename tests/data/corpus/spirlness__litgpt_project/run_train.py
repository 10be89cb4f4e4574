import os

# Import torch_xla for TPU support if available
# This fixes "AttributeError: module 'torch' has no attribute 'xla'" in torch.utils.checkpoint
try:
    import torch_xla
    import torch_xla.core.xla_model
except ImportError:
    torch_xla = None

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("NCCL_DEBUG", "WARN")

import argparse
import concurrent.futures
import importlib
import time
from pathlib import Path
from typing import Any, cast

import lightning as L
import torch
import torch.nn.functional as F
import yaml
from litgpt.model import GPT
from litgpt.tokenizer import Tokenizer

from src.litgpt_moe.config import MoEConfig
from src.litgpt_moe.fixed_text_files import FixedTextFiles
from src.litgpt_moe.utils import (
    apply_runtime_config,
    configure_flash_attention,
    apply_gradient_checkpointing,
    validate as validate_loop,
    verify_flash_attention,
)


_UPLOAD_EXECUTOR: concurrent.futures.ThreadPoolExecutor | None = None


def _get_upload_executor() -> concurrent.futures.ThreadPoolExecutor:
    global _UPLOAD_EXECUTOR
    if _UPLOAD_EXECUTOR is None:
        _UPLOAD_EXECUTOR = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    return _UPLOAD_EXECUTOR


def _shutdown_upload_executor() -> None:
    global _UPLOAD_EXECUTOR
    if _UPLOAD_EXECUTOR is not None:
        _UPLOAD_EXECUTOR.shutdown(wait=False)
        _UPLOAD_EXECUTOR = None


def _upload_and_cleanup(
    checkpoint_dir: Path,
    repo_id: str,
    step: int,
    out_dir: Path,
    *,
    keep_last_local: int = 2,
) -> None:
    # Upload to Hugging Face Hub (Automatic Backup)
    uploaded = False
    try:
        from huggingface_hub import HfApi

        api = HfApi()
        print(f"Uploading step {step} to {repo_id}...")
        # Upload folder content
        api.upload_folder(
            folder_path=str(checkpoint_dir),
            repo_id=repo_id,
            path_in_repo=f"step-{step:08d}",
            repo_type="model",
            commit_message=f"Upload checkpoint step {step}",
        )
        print(f"Successfully uploaded step {step} to Hugging Face Hub")
        uploaded = True
    except Exception as e:
        print(f"Failed to upload checkpoint to Hugging Face Hub: {e}")
        print("Continuing training despite upload failure...")
        return

    import shutil

    if not uploaded:
        return

    keep_last_local = max(int(keep_last_local), 1)
    step_dirs = sorted(path for path in out_dir.glob("step-*") if path.is_dir())
    stale_dirs = step_dirs[:-keep_last_local]
    for checkpoint in stale_dirs:
        try:
            shutil.rmtree(checkpoint)
        except Exception as e:
            print(f"Failed to remove old checkpoint {checkpoint}: {e}")


def load_yaml(path: Path) -> dict:
    with path.open("r", encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def resolve_class(path: str):
    module_name, class_name = path.rsplit(".", 1)
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def build_data_module(data_cfg: dict, *, train_data_path: Path, val_data_path: Path | None, num_workers: int):
    class_path = data_cfg.get("class_path")
    init_args = dict(data_cfg.get("init_args", {}))
    init_args["train_data_path"] = train_data_path
    init_args["val_data_path"] = val_data_path
    init_args["num_workers"] = num_workers

    if not class_path or class_path == "src.litgpt_moe.fixed_text_files.FixedTextFiles":
        data_cls = FixedTextFiles
    else:
        data_cls = resolve_class(class_path)
    return data_cls(**init_args)


def _write_checkpoint_metadata(
    checkpoint_dir: Path,
    *,
    model_config: dict[str, Any] | None = None,
    train_config: dict[str, Any] | None = None,
    tokenizer_dir: Path | None = None,
) -> None:
    if model_config is not None:
        with (checkpoint_dir / "model_config.yaml").open("w", encoding="utf-8") as f:
            yaml.safe_dump({"model_config": model_config}, f, sort_keys=False)
    if train_config is not None or tokenizer_dir is not None:
        metadata = {"train_config": train_config or {}}
        if tokenizer_dir is not None:
            metadata["tokenizer_dir"] = str(tokenizer_dir)
        with (checkpoint_dir / "training_metadata.yaml").open("w", encoding="utf-8") as f:
            yaml.safe_dump(metadata, f, sort_keys=False)


def build_optimizer(model: torch.nn.Module, optimizer_cfg: dict) -> torch.optim.Optimizer:
    class_path = optimizer_cfg.get("class_path", "torch.optim.AdamW")
    init_args = optimizer_cfg.get("init_args", {})

    # Muon requires dedicated parameter grouping:
    # - matrix-like hidden weights -> Muon
    # - embeddings / lm_head / 1D params -> Adam
    if class_path == "muon.MuonWithAuxAdam":
        from muon import MuonWithAuxAdam, SingleDeviceMuonWithAuxAdam

        muon_params = []
        adam_params = []
        for name, param in model.named_parameters():
            if not param.requires_grad:
                continue
            if param.ndim >= 2 and "embed" not in name and "lm_head" not in name:
                muon_params.append(param)
            else:
                adam_params.append(param)

        param_groups = []
        if muon_params:
            param_groups.append(
                {
                    "params": muon_params,
                    "use_muon": True,
                    "lr": float(init_args.get("muon_lr", 0.01)),
                    "momentum": float(init_args.get("muon_momentum", 0.95)),
                    "weight_decay": float(init_args.get("muon_weight_decay", 0.01)),
                }
            )
        if adam_params:
            betas = init_args.get("adam_betas", (0.9, 0.95))
            param_groups.append(
                {
                    "params": adam_params,
                    "use_muon": False,
                    "lr": float(init_args.get("adam_lr", 3e-4)),
                    "betas": tuple(betas),
                    "eps": float(init_args.get("adam_eps", 1e-8)),
                    "weight_decay": float(init_args.get("adam_weight_decay", 0.01)),
                }
            )

        if not param_groups:
            raise ValueError("No trainable parameters found for Muon optimizer.")

        if torch.distributed.is_available() and torch.distributed.is_initialized():
            return MuonWithAuxAdam(param_groups)
        return SingleDeviceMuonWithAuxAdam(param_groups)

    optimizer_cls = resolve_class(class_path)
    return optimizer_cls(model.parameters(), **init_args)


def find_latest_checkpoint(out_dir: Path) -> Path | None:
    candidates = sorted(out_dir.glob("step-*/lit_model.pth"))
    if not candidates:
        return None
    return candidates[-1]


def save_checkpoint(
    fabric: L.Fabric,
    out_dir: Path,
    step: int,
    total_tokens: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    *,
    upload_to_hf: bool = False,
    hf_repo_id: str | None = None,
    keep_last_local: int = 2,
    model_config: dict[str, Any] | None = None,
    train_config: dict[str, Any] | None = None,
    tokenizer_dir: Path | None = None,
):
    checkpoint_dir = out_dir / f"step-{step:08d}"
    if fabric.is_global_zero:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        _write_checkpoint_metadata(
            checkpoint_dir,
            model_config=model_config,
            train_config=train_config,
            tokenizer_dir=tokenizer_dir,
        )
    fabric.barrier()
    fabric.save(
        checkpoint_dir / "lit_model.pth",
        {
            "model": model,
            "optimizer": optimizer,
            "step": step,
            "total_tokens": total_tokens,
        },
    )

    if fabric.is_global_zero and upload_to_hf:
        if not hf_repo_id:
            fabric.print("Skipping HF upload: `upload_to_hf` is enabled but no `hf_repo_id` is configured.")
        else:
            _get_upload_executor().submit(
                _upload_and_cleanup,
                checkpoint_dir,
                hf_repo_id,
                step,
                out_dir,
                keep_last_local=keep_last_local,
            )


def train(model_cfg_path: Path, train_cfg_path: Path, args: argparse.Namespace) -> None:
    model_cfg = load_yaml(model_cfg_path)
    train_cfg = load_yaml(train_cfg_path)

    if "model_config" in model_cfg:
        model_cfg = model_cfg["model_config"]

    if "norm_eps" in model_cfg:
        model_cfg["norm_eps"] = float(model_cfg["norm_eps"])

    # Extract MoE specific args that are not in LitGPT Config
    moe_args = {}
    for key in ["moe_aux_loss_weight", "moe_router_stats"]:
        if key in model_cfg:
            moe_args[key] = model_cfg.pop(key)

    opt_cfg = train_cfg.get("optimization", {})
    # Check environment variable for compile override
    env_compile = os.environ.get("TORCH_COMPILE")
    if env_compile is not None:
        env_compile = env_compile.lower() in ("1", "true", "yes", "on")

    if args.compile is not None:
        use_compile = args.compile
    elif env_compile is not None:
        use_compile = env_compile
    else:
        use_compile = opt_cfg.get("compile", False)

    compile_mode = args.compile_mode or opt_cfg.get("compile_mode", "default")
    compile_dynamic = (
        args.compile_dynamic if args.compile_dynamic is not None else opt_cfg.get("compile_dynamic", False)
    )
    compile_fullgraph = (
        args.compile_fullgraph if args.compile_fullgraph is not None else opt_cfg.get("compile_fullgraph", False)
    )

    use_flash_attention = (
        args.flash_attention if args.flash_attention is not None else opt_cfg.get("flash_attention", False)
    )
    flash_attention_force = (
        args.flash_attention_force
        if args.flash_attention_force is not None
        else opt_cfg.get("flash_attention_force", False)
    )
    disable_math_fallback = opt_cfg.get("disable_math_fallback", False)

    flash_attention_enabled = bool(use_flash_attention or flash_attention_force)
    effective_disable_math_fallback = bool(disable_math_fallback and flash_attention_enabled)

    apply_runtime_config()
    configure_flash_attention(
        enable=flash_attention_enabled,
        disable_math_fallback=effective_disable_math_fallback,
    )
    if use_flash_attention or flash_attention_force:
        verify_flash_attention(force=flash_attention_force, verbose=True)
    # patch_flops_measurement() # Not imported and seemingly undefined

    train_section = train_cfg.get("train", {})
    eval_section = train_cfg.get("eval", {})
    checkpointing_cfg = train_cfg.get("checkpointing", {})
    data_section = train_cfg.get("data", {})
    optimizer_section = train_cfg.get("optimizer", {})
    grad_checkpointing = bool(train_section.get("gradient_checkpointing", False))
    upload_to_hf = bool(checkpointing_cfg.get("upload_to_hf", False))
    hf_repo_id = checkpointing_cfg.get("hf_repo_id") or os.environ.get("HF_REPO_ID")
    keep_last_local = int(checkpointing_cfg.get("keep_last_local", 2))

    fabric = L.Fabric(
        strategy=train_cfg.get("strategy", "ddp"),
        devices=train_cfg.get("devices", 2),
        num_nodes=train_cfg.get("num_nodes", 1),
        precision=train_cfg.get("precision", "16-mixed"),
    )
    fabric.launch()

    if grad_checkpointing:
        # patch_gradient_checkpointing()
        # fabric.print("Enabled gradient checkpointing via Block.forward patch")
        pass # Will be applied to model instance later

    out_dir = Path(train_cfg.get("out_dir", "checkpoints"))
    tokenizer_dir = Path(train_cfg.get("tokenizer_dir", "data/tokenizer"))

    if fabric.is_global_zero:
        out_dir.mkdir(parents=True, exist_ok=True)
    fabric.barrier()

    if not tokenizer_dir.exists():
        raise FileNotFoundError(f"Tokenizer not found at {tokenizer_dir}. Run prepare_data.py first.")

    # config = Config(**model_cfg)
    #
    # # Inject MoE args back into config object
    # for key, value in moe_args.items():
    #     setattr(config, key, value)
    
    # Use MoEConfig directly, which handles moe_args via inheritance if passed in model_cfg
    # We re-merge moe_args back into model_cfg if they were popped, or just pass model_cfg if it contains them
    model_cfg.update(moe_args)
    model_cfg_for_ckpt = dict(model_cfg)
    config = MoEConfig(**model_cfg)

    model = GPT(config)
    max_seq_length = int(train_section.get("max_seq_length", config.block_size))
    model.max_seq_length = max_seq_length

    optimizer = build_optimizer(model, optimizer_section)

    model, optimizer = fabric.setup(model, optimizer)

    if grad_checkpointing:
        apply_gradient_checkpointing(model)
        fabric.print("Enabled gradient checkpointing via instance wrapping")

    if use_compile:
        # Check if the model is wrapped (e.g. by Fabric or DDP) and has a _forward_module attribute
        # If so, we compile the internal module to avoid issues with the wrapper.
        if hasattr(model, "_forward_module"):
            fabric.print("Compiling _forward_module of the wrapped model")
            model._forward_module = torch.compile(
                model._forward_module,
                mode=compile_mode,
                dynamic=compile_dynamic,
                fullgraph=compile_fullgraph,
            )
        else:
            model = torch.compile(
                model, mode=compile_mode, dynamic=compile_dynamic, fullgraph=compile_fullgraph
            )
        fabric.print(
            f"Model compiled with mode={compile_mode}, dynamic={compile_dynamic}, fullgraph={compile_fullgraph}"
        )

    train_data_path = data_section.get("init_args", {}).get("train_data_path")
    val_data_path = data_section.get("init_args", {}).get("val_data_path")
    num_workers = int(data_section.get("init_args", {}).get("num_workers", 2))

    if train_data_path is None:
        raise ValueError("train_data_path is required in train config data.init_args.train_data_path")

    data = build_data_module(
        data_section,
        train_data_path=Path(train_data_path),
        val_data_path=Path(val_data_path) if val_data_path else None,
        num_workers=num_workers,
    )

    tokenizer = Tokenizer(tokenizer_dir)

    micro_batch_size = int(train_section.get("micro_batch_size", 1))
    global_batch_size = int(train_section.get("global_batch_size", micro_batch_size * fabric.world_size))

    data.connect(tokenizer=tokenizer, batch_size=micro_batch_size, max_seq_length=max_seq_length)
    if fabric.is_global_zero:
        data.prepare_data()
    fabric.barrier()

    train_dataloader = data.train_dataloader()
    train_dataloader = fabric.setup_dataloaders(train_dataloader)
    eval_interval = int(eval_section.get("interval", 0))
    final_validation = bool(eval_section.get("final_validation", False))
    eval_max_iters = int(eval_section.get("max_iters", 20))
    val_dataloader = None
    if eval_interval > 0 or final_validation:
        val_dataloader = data.val_dataloader()
        val_dataloader = fabric.setup_dataloaders(val_dataloader)

    world_size = fabric.world_size
    denom = micro_batch_size * world_size
    if global_batch_size % denom != 0:
        raise ValueError(
            f"global_batch_size ({global_batch_size}) must be divisible by micro_batch_size * world_size ({denom})."
        )
    grad_accum_steps = global_batch_size // denom

    max_tokens = int(train_section.get("max_tokens", 0))
    log_interval = int(train_section.get("log_interval", 1))
    save_interval = int(train_section.get("save_interval", 0))
    max_norm = float(train_section.get("max_norm", 0.0))
    lr_warmup_steps = int(train_section.get("lr_warmup_steps", 0))

    base_lrs = [group["lr"] for group in optimizer.param_groups]

    start_step = 0
    total_tokens = 0
    resume = train_cfg.get("resume", None)
    if resume:
        ckpt_path: Path | None = None
        if isinstance(resume, str) and resume.lower() == "auto":
            ckpt_path = find_latest_checkpoint(out_dir)
        else:
            ckpt_path = Path(resume)

        if ckpt_path and ckpt_path.exists():
            state = {"model": model, "optimizer": optimizer, "step": 0, "total_tokens": 0}
            # Set strict=False to handle potential missing keys (like step/total_tokens in older checkpoints)
            fabric.load(ckpt_path, state, strict=False)
            start_step = int(state.get("step", 0))
            total_tokens = int(state.get("total_tokens", 0))
            fabric.print(f"Resumed from {ckpt_path} (step={start_step}, tokens={total_tokens})")

    fabric.print(
        " | ".join(
            [
                f"Model={config.name}",
                f"Devices={world_size}",
                f"MicroBS={micro_batch_size}",
                f"GlobalBS={global_batch_size}",
                f"Accum={grad_accum_steps}",
                f"MaxSeq={max_seq_length}",
                f"MaxTokens={max_tokens}",
            ]
        )
    )

    model.train()
    data_iter = iter(train_dataloader)
    last_log_time = time.perf_counter()
    last_log_tokens = total_tokens
    global_step = start_step

    while max_tokens <= 0 or total_tokens < max_tokens:
        loss_sum = torch.zeros((), device=fabric.device)
        for micro_step in range(grad_accum_steps):
            try:
                batch = cast(torch.Tensor, next(data_iter))
            except StopIteration:
                data_iter = iter(train_dataloader)
                batch = cast(torch.Tensor, next(data_iter))

            input_ids = batch[:, :max_seq_length].contiguous()
            targets = batch[:, 1 : max_seq_length + 1].contiguous()

            sync_gradients = micro_step == grad_accum_steps - 1
            with fabric.no_backward_sync(model, enabled=not sync_gradients):
                logits = model(input_ids)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
                moe_stats = getattr(model, "router_stats", None)
                if moe_stats and moe_stats.get("aux_loss") is not None and model.config.moe_aux_loss_weight > 0:
                    loss = loss + model.config.moe_aux_loss_weight * moe_stats["aux_loss"]
                loss_sum += loss.detach()
                fabric.backward(loss / grad_accum_steps)

            total_tokens += input_ids.numel() * world_size

            if max_tokens > 0 and total_tokens >= max_tokens:
                break

        if max_norm > 0:
            fabric.clip_gradients(model, optimizer, max_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        global_step += 1

        if lr_warmup_steps > 0 and global_step <= lr_warmup_steps:
            scale = min(global_step / lr_warmup_steps, 1.0)
            for group, base_lr in zip(optimizer.param_groups, base_lrs, strict=False):
                group["lr"] = base_lr * scale

        if log_interval > 0 and global_step % log_interval == 0:
            avg_loss = loss_sum / grad_accum_steps
            avg_loss = cast(torch.Tensor, fabric.all_reduce(avg_loss, reduce_op="mean"))
            moe_stats = getattr(model, "router_stats", None)
            aux_loss_value = None
            if moe_stats and moe_stats.get("aux_loss") is not None:
                aux_loss_value = moe_stats["aux_loss"].detach()
            now = time.perf_counter()
            elapsed = now - last_log_time
            tokens_delta = total_tokens - last_log_tokens
            tokens_per_sec = tokens_delta / elapsed if elapsed > 0 else 0.0
            lr = optimizer.param_groups[0]["lr"]
            aux_loss_text = ""
            if aux_loss_value is not None and model.config.moe_aux_loss_weight > 0:
                aux_loss_text = f" aux={aux_loss_value.item():.4f}"
            fabric.print(
                f"step={global_step} loss={avg_loss.item():.4f}{aux_loss_text} tokens={total_tokens} tok/s={tokens_per_sec:.0f} lr={lr:.2e}"
            )
            last_log_time = now
            last_log_tokens = total_tokens

        if save_interval > 0 and global_step % save_interval == 0:
            save_checkpoint(
                fabric,
                out_dir,
                global_step,
                total_tokens,
                model,
                optimizer,
                upload_to_hf=upload_to_hf,
                hf_repo_id=hf_repo_id,
                keep_last_local=keep_last_local,
                model_config=model_cfg_for_ckpt,
                train_config=train_cfg,
                tokenizer_dir=tokenizer_dir,
            )

        if val_dataloader is not None and eval_interval > 0 and global_step % eval_interval == 0:
            val_loss = validate_loop(
                fabric=fabric,
                model=model,
                val_dataloader=val_dataloader,
                max_iters=eval_max_iters,
                verbose=True,
            )
            val_loss = cast(torch.Tensor, fabric.all_reduce(val_loss, reduce_op="mean"))
            fabric.print(f"step={global_step} val_loss={val_loss.item():.4f}")

        if max_tokens > 0 and total_tokens >= max_tokens:
            break

    if val_dataloader is not None and final_validation:
        val_loss = validate_loop(
            fabric=fabric,
            model=model,
            val_dataloader=val_dataloader,
            max_iters=eval_max_iters,
            verbose=True,
        )
        val_loss = cast(torch.Tensor, fabric.all_reduce(val_loss, reduce_op="mean"))
        fabric.print(f"final_val_loss={val_loss.item():.4f}")

    save_checkpoint(
        fabric,
        out_dir,
        global_step,
        total_tokens,
        model,
        optimizer,
        upload_to_hf=upload_to_hf,
        hf_repo_id=hf_repo_id,
        keep_last_local=keep_last_local,
        model_config=model_cfg_for_ckpt,
        train_config=train_cfg,
        tokenizer_dir=tokenizer_dir,
    )
    _shutdown_upload_executor()
    if fabric.device.type == "cuda":
        allocated_gib = torch.cuda.max_memory_allocated() / (1024**3)
        reserved_gib = torch.cuda.max_memory_reserved() / (1024**3)
        fabric.print(f"max_memory_allocated_gib={allocated_gib:.3f}")
        fabric.print(f"max_memory_reserved_gib={reserved_gib:.3f}")
    fabric.print("Training complete.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="LitGPT Fabric training")
    parser.add_argument("--model-config", type=Path, default=Path("configs/moe_200m.yaml"))
    parser.add_argument("--train-config", type=Path, default=Path("configs/kaggle_t4_ddp.yaml"))
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument(
        "--compile-mode", type=str, choices=["default", "reduce-overhead", "max-autotune"], default=None
    )
    parser.add_argument("--compile-dynamic", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--compile-fullgraph", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--flash-attention", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--flash-attention-force", action=argparse.BooleanOptionalAction, default=None)

    args = parser.parse_args()

    train(args.model_config, args.train_config, args)
