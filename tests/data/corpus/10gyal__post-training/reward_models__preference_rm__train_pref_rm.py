import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from torch.utils.data import DataLoader
from transformers import get_cosine_schedule_with_warmup

if __package__ is None or __package__ == "":
    sys.path.append(str(Path(__file__).resolve().parents[2]))

from reward_models.base_rm import BaseRM  # noqa: E402
from reward_models.preference_rm.utils import (  # noqa: E402
    collate_fn,
    load_config,
    load_tokenizer,
    prepare_dataset,
    prepare_reward_bench_dataset,
    reward_bench_collate_fn,
)

console = Console()


def iter_with_progress(dloader: DataLoader, description: str):
    try:
        total = len(dloader)
    except TypeError:
        total = None

    with Progress(
        TextColumn("[bold blue]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        task = progress.add_task(description, total=total)
        for batch in dloader:
            yield batch
            progress.update(task, advance=1)


class BTModel(BaseRM):
    def __init__(self, model_name, head_dim: int = 1) -> None:
        super().__init__(model_name, head_dim)

    def get_reward(self, ids, masks):
        # get the hidden state of the last non-padding token from the sequence
        hidden = self.get_hidden_states(ids, masks)

        seq_lengths = masks.sum(dim=1) - 1  # zero-index lengths
        batch_indices = torch.arange(hidden.size(0), device=hidden.device)
        last_hidden = hidden[batch_indices, seq_lengths]

        reward = self.head(last_hidden).squeeze(-1)
        return reward

    def forward(self, chosen_ids, chosen_mask, rejected_ids, rejected_mask):
        r_chosen = self.get_reward(chosen_ids, chosen_mask)
        r_rejected = self.get_reward(rejected_ids, rejected_mask)

        loss = -F.logsigmoid(r_chosen - r_rejected).mean()

        return loss, r_chosen, r_rejected


def eval(model: BTModel, dloader: DataLoader) -> dict[str, float]:
    """Measure preference accuracy and reward statistics on an eval dataset."""
    device = next(model.parameters()).device

    correct, total = 0, 0
    chosen_sum, rejected_sum, margin_sum = 0.0, 0.0, 0.0
    model.eval()
    with torch.no_grad():
        for batch in iter_with_progress(dloader, "Preference eval"):
            batch = {k: v.to(device) for k, v in batch.items()}
            _, r_chosen, r_rejected = model(**batch)
            chosen = r_chosen.detach().float()
            rejected = r_rejected.detach().float()
            margin = chosen - rejected

            correct += (margin > 0).sum().item()
            batch_size = chosen.size(0)
            total += batch_size
            chosen_sum += chosen.sum().item()
            rejected_sum += rejected.sum().item()
            margin_sum += margin.sum().item()

    if total == 0:
        return {
            "accuracy": float("nan"),
            "chosen_reward": float("nan"),
            "rejected_reward": float("nan"),
            "reward_margin": float("nan"),
        }

    return {
        "accuracy": correct / total,
        "chosen_reward": chosen_sum / total,
        "rejected_reward": rejected_sum / total,
        "reward_margin": margin_sum / total,
    }


def eval_reward_bench(model: BTModel, dloader: DataLoader) -> dict[str, float]:
    """Measure RewardBench 2 prompt-level top-candidate accuracy."""
    device = next(model.parameters()).device

    correct, total = 0.0, 0
    correct_reward_sum, incorrect_reward_sum = 0.0, 0.0
    correct_count, incorrect_count = 0, 0

    model.eval()
    with torch.no_grad():
        for batch in iter_with_progress(dloader, "RewardBench eval"):
            ids = batch["candidate_ids"].to(device)
            masks = batch["candidate_masks"].to(device)
            num_correct = batch["num_correct"]

            scores = model.get_reward(ids, masks).detach().float().cpu()
            max_score = scores.max()
            top_mask = scores == max_score
            top_correct = top_mask[:num_correct].any().item()

            if top_correct:
                correct += 1.0 / top_mask.sum().item()
            total += 1

            correct_scores = scores[:num_correct]
            incorrect_scores = scores[num_correct:]
            correct_reward_sum += correct_scores.sum().item()
            incorrect_reward_sum += incorrect_scores.sum().item()
            correct_count += correct_scores.numel()
            incorrect_count += incorrect_scores.numel()

    if total == 0:
        return {
            "accuracy": float("nan"),
            "correct_reward": float("nan"),
            "incorrect_reward": float("nan"),
            "reward_margin": float("nan"),
        }

    mean_correct = correct_reward_sum / correct_count if correct_count else float("nan")
    mean_incorrect = (
        incorrect_reward_sum / incorrect_count if incorrect_count else float("nan")
    )
    margin = mean_correct - mean_incorrect

    return {
        "accuracy": correct / total,
        "correct_reward": mean_correct,
        "incorrect_reward": mean_incorrect,
        "reward_margin": margin,
    }


def print_eval_metrics(metrics: dict[str, float]) -> None:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")

    accuracy = metrics["accuracy"]
    if accuracy == accuracy:
        table.add_row("Preference accuracy", f"[bold green]{accuracy:.2%}[/bold green]")
        table.add_row("Mean chosen reward", f"{metrics['chosen_reward']:.4f}")
        table.add_row("Mean rejected reward", f"{metrics['rejected_reward']:.4f}")
        table.add_row("Mean margin", f"{metrics['reward_margin']:+.4f}")
    else:
        table.add_row("Preference accuracy", "[bold yellow]n/a[/bold yellow]")
        table.add_row("Mean chosen reward", "nan")
        table.add_row("Mean rejected reward", "nan")
        table.add_row("Mean margin", "nan")

    console.print()
    console.print(Panel(table, title="Evaluation", border_style="green"))


def print_reward_bench_metrics(metrics: dict[str, float]) -> None:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")

    accuracy = metrics["accuracy"]
    if accuracy == accuracy:
        table.add_row(
            "RewardBench 2 accuracy", f"[bold green]{accuracy:.2%}[/bold green]"
        )
        table.add_row("Mean correct reward", f"{metrics['correct_reward']:.4f}")
        table.add_row("Mean incorrect reward", f"{metrics['incorrect_reward']:.4f}")
        table.add_row("Mean margin", f"{metrics['reward_margin']:+.4f}")
    else:
        table.add_row("RewardBench 2 accuracy", "[bold yellow]n/a[/bold yellow]")
        table.add_row("Mean correct reward", "nan")
        table.add_row("Mean incorrect reward", "nan")
        table.add_row("Mean margin", "nan")

    console.print()
    console.print(Panel(table, title="RewardBench 2 Evaluation", border_style="green"))


def main():

    cfg = load_config(Path(__file__).with_name("config.yaml"))
    wandb = None
    if cfg.use_wandb:
        import wandb

        wandb.init(
            project=cfg.wandb_project,
            name=cfg.wandb_run_name,
            mode=cfg.wandb_mode,
            config=cfg.model_dump(),
        )

    base_model = cfg.base_model
    dataset_name = cfg.dataset_name
    limit = cfg.limit
    max_length = cfg.max_length
    batch_size = cfg.batch_size
    lr = cfg.lr
    epochs = cfg.epochs
    warmup_ratio = cfg.warmup_ratio
    grad_accum_steps = max(1, cfg.grad_accum_steps)

    device = "cuda" if torch.cuda.is_available() else "mps"

    tokenizer = load_tokenizer(base_model)

    train_ds = prepare_dataset(
        dataset_name, tokenizer, max_length, limit, split="train"
    )
    console.print(f"[bold]Dataset Size:[/bold] {len(train_ds)}")
    loader = DataLoader(
        train_ds,
        batch_size=batch_size,
        shuffle=True,
        drop_last=len(train_ds) > batch_size,
        collate_fn=lambda b: collate_fn(b, tokenizer),
    )

    console.print(f"[bold]Loading model:[/bold] {base_model}")
    model = BTModel(model_name=base_model).to(device)
    console.print(
        f"[bold]Trainable parameters:[/bold] {model.count_trainable_params() / 1e6:.2f}M"
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    total_steps = max(1, math.ceil(len(loader) / grad_accum_steps) * epochs)
    warmup_steps = int(total_steps * warmup_ratio)
    scheduler = get_cosine_schedule_with_warmup(
        optimizer,
        num_warmup_steps=warmup_steps,
        num_training_steps=total_steps,
    )

    model.train()
    global_step = 0
    num_train_batches = len(loader)
    final_accum_steps = num_train_batches % grad_accum_steps or grad_accum_steps
    optimizer.zero_grad()

    for epoch in range(epochs):
        with Progress(
            TextColumn("[bold blue]{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("loss={task.fields[loss]}"),
            TextColumn("chosen={task.fields[chosen]}"),
            TextColumn("rejected={task.fields[rejected]}"),
            console=console,
        ) as progress:
            task = progress.add_task(
                f"Epoch {epoch + 1}/{epochs}",
                total=len(loader),
                loss="n/a",
                chosen="n/a",
                rejected="n/a",
            )

            accum_loss = 0.0
            accum_chosen_reward = 0.0
            accum_rejected_reward = 0.0
            accum_reward_margin = 0.0
            accum_accuracy = 0.0
            accum_batches = 0

            for batch_idx, batch in enumerate(loader, start=1):
                batch = {k: v.to(device) for k, v in batch.items()}

                loss, r_chosen, r_rejected = model(**batch)
                loss_item = loss.detach().item()
                reward_margin = r_chosen - r_rejected
                train_accuracy = (reward_margin > 0).detach().float().mean().item()

                accum_loss += loss_item
                accum_chosen_reward += r_chosen.detach().float().mean().item()
                accum_rejected_reward += r_rejected.detach().float().mean().item()
                accum_reward_margin += reward_margin.detach().float().mean().item()
                accum_accuracy += train_accuracy
                accum_batches += 1

                accum_divisor = (
                    final_accum_steps
                    if batch_idx > num_train_batches - final_accum_steps
                    else grad_accum_steps
                )
                (loss / accum_divisor).backward()

                should_step = (
                    batch_idx % grad_accum_steps == 0 or batch_idx == num_train_batches
                )
                if should_step:
                    torch.nn.utils.clip_grad_norm_(
                        model.parameters(), cfg.max_grad_norm
                    )
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()

                    if wandb is not None and global_step % cfg.log_every == 0:
                        wandb.log(
                            {
                                "train/loss": accum_loss / accum_batches,
                                "train/reward_chosen": accum_chosen_reward
                                / accum_batches,
                                "train/reward_rejected": accum_rejected_reward
                                / accum_batches,
                                "train/reward_margin": accum_reward_margin
                                / accum_batches,
                                "train/accuracy": accum_accuracy / accum_batches,
                                "train/preference_accuracy": accum_accuracy
                                / accum_batches,
                                "train/lr": optimizer.param_groups[0]["lr"],
                                "train/epoch": epoch + 1,
                            },
                            step=global_step,
                        )

                    accum_loss = 0.0
                    accum_chosen_reward = 0.0
                    accum_rejected_reward = 0.0
                    accum_reward_margin = 0.0
                    accum_accuracy = 0.0
                    accum_batches = 0
                    global_step += 1

                progress.update(
                    task,
                    advance=1,
                    loss=f"{loss_item:.4f}",
                    chosen=f"{r_chosen.detach().float().mean().item():.4f}",
                    rejected=f"{r_rejected.detach().float().mean().item():.4f}",
                )

    if cfg.evaluate_on_reward_bench:
        eval_ds = prepare_reward_bench_dataset(
            tokenizer,
            subset=cfg.reward_bench_subset,
            max_length=max_length,
        )
        eval_loader = DataLoader(
            eval_ds,
            batch_size=1,
            shuffle=False,
            drop_last=False,
            collate_fn=lambda b: reward_bench_collate_fn(b, tokenizer),
        )

        metrics = eval_reward_bench(model, eval_loader)
        if wandb is not None:
            wandb.log(
                {
                    "eval/reward_bench_accuracy": metrics["accuracy"],
                    "eval/reward_bench_correct_reward": metrics["correct_reward"],
                    "eval/reward_bench_incorrect_reward": metrics[
                        "incorrect_reward"
                    ],
                    "eval/reward_bench_reward_margin": metrics["reward_margin"],
                },
                step=global_step,
            )

        print_reward_bench_metrics(metrics)

    if wandb is not None:
        wandb.finish()


if __name__ == "__main__":
    main()
