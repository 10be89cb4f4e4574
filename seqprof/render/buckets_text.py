"""A BucketReport as terminal tables a person can act on, ending in boundaries ready to paste (rich)."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from seqprof.batching.buckets import BucketReport
from seqprof.batching.simulate import BUCKETED, FIXED, RANDOM, SORTED
from seqprof.predict.runtime import format_duration


def bucket_report_renderable(report: BucketReport) -> Group:
    """Header, strategy comparison, boundary methods, per-bucket table, verdict and a paste block."""
    sim = report.simulation
    batching = (f"batch size {report.batch_size}" if report.batch_size is not None
                else f"token budget {report.token_budget:,} (fill while (n+1)·longest ≤ budget)")
    head = Text.assemble(
        ("rows ", "bold"), f"{sim.rows:,}  ", ("tokens ", "bold"), f"{sim.real_tokens:,}  ",
        ("max_seq_length ", "bold"), f"{report.max_seq_length:,}",
        f" ({sim.truncated_rows:,} rows truncated)" if sim.truncated_rows else "", "  ",
        ("batching ", "bold"), batching,
    )
    return Group(head, _strategy_table(report), _method_table(report), _bucket_table(report),
                 _verdict(report), _paste(report))


def _strategy_table(report: BucketReport) -> Table:
    sim = report.simulation
    table = Table(title=f"batching strategies, per epoch (mean ± sd over {sim.epochs} seeded epochs)",
                  title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    timed = report.timing is not None
    columns = ("strategy", "efficiency", "padded", "batches", "vs fixed", "alike", "repeat")
    for col in columns + (("s/step", "epoch", "tok/s") if timed else ()):
        table.add_column(col, justify="left" if col == "strategy" else "right", no_wrap=True)
    for name, s in sim.strategies.items():
        spread = f"±{s.padding_efficiency_std:.1%}" if s.padding_efficiency_std else ""
        times = (f"{s.step_seconds:.2f}" if s.step_seconds else "n/a", format_duration(s.epoch_seconds),
                 _short(s.tokens_per_second or 0)) if timed else ()
        table.add_row(
            name, f"{s.padding_efficiency:.1%}{spread}", _short(s.padded_tokens), f"{s.batches:,.0f}",
            _times(s.speedup_vs_fixed),
            "n/a" if s.consecutive_similarity is None else f"{s.consecutive_similarity:+.2f}",
            "n/a" if s.repeated_batches is None else f"{s.repeated_batches:.0%}", *times,
            style="bold green" if name == BUCKETED else None,
        )
    table.caption = ("efficiency: real / computed tokens. padded: pad tokens per epoch. vs fixed: compute saved against padding to max_seq_length. "
                     "alike: correlation of neighbouring batches' mean lengths (1 = sorted). "
                     "repeat: share of epoch 2's batches that are exactly a batch of epoch 1."
                     + (f" s/step, epoch, tok/s (real tokens): {report.timing}." if timed else ""))
    table.caption_justify = "left"
    return table


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x" if ratio < 100 else f"{ratio:,.0f}x"


def _short(tokens: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(tokens) >= size:
            return f"{tokens / size:.1f}{unit}"
    return f"{tokens:,.0f}"


def _method_table(report: BucketReport) -> Table:
    table = Table(title=f"{report.num_buckets} bucket boundaries, every row padded to its bucket's bound",
                  title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for col in ("method", "real / computed", "padded tokens", "boundaries"):
        table.add_column(col, justify="left" if col in ("method", "boundaries") else "right")
    for m in report.methods:
        table.add_row(m.method, f"{m.padding_efficiency:.1%}", f"{m.padded_tokens:,}",
                      ", ".join(str(b) for b in m.boundaries), style="bold" if m.method == "optimal" else None)
    return table


def _bucket_table(report: BucketReport) -> Table:
    total = sum(b.rows for b in report.buckets) or 1
    table = Table(title="solved buckets", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for col in ("up to", "rows", "share", "pad to bound", "pad per batch"):
        table.add_column(col, justify="right")
    for b in report.buckets:
        per_batch = ("n/a" if b.expected_batch_padding is None
                     else f"{b.real_tokens / (b.real_tokens + b.expected_batch_padding):.1%}" if b.rows else "-")
        bound = f"{b.real_tokens / (b.real_tokens + b.pad_to_bound):.1%}" if b.real_tokens else "-"
        table.add_row(f"{b.upper:,}", f"{b.rows:,}", f"{b.rows / total:.1%}", bound, per_batch)
    table.caption = "real / computed tokens inside each bucket: padded to its bound, or to each batch's longest"
    table.caption_justify = "left"
    return table


def _verdict(report: BucketReport) -> Text:
    s = report.simulation.strategies
    bucketed, rand, srt, fixed = s[BUCKETED], s[RANDOM], s[SORTED], s[FIXED]
    how = "exact expectation" if report.padding_efficiency_method == "exact" else "Monte Carlo mean"
    return Text.assemble(
        ("bucketed shuffle ", "bold green"),
        f"keeps {report.padding_efficiency:.1%} of computed tokens real ({how}): "
        f"{_times(rand.computed_tokens / bucketed.computed_tokens)} less compute than a random shuffle "
        f"({rand.padding_efficiency:.1%}) and {_times(fixed.computed_tokens / bucketed.computed_tokens)} less "
        f"than fixed padding, with {bucketed.repeated_batches or 0:.0%} of batches repeated between epochs. "
        f"Sorted static batches reach {srt.padding_efficiency:.1%} but repeat "
        f"{srt.repeated_batches or 0:.0%} of their batches every epoch.",
    )


def _paste(report: BucketReport) -> Group:
    size = (f"batch_size={report.batch_size}" if report.batch_size is not None
            else f"token_budget={report.token_budget}")
    lines = [f"boundaries = {list(report.boundaries)}",
             f"sampler = BucketedShuffleSampler(lengths, boundaries, {size})  # from seqprof"]
    # never wrapped, so the lines paste as they are whatever the terminal width
    return Group(Text("paste:", style="bold"),
                 *(Text(line, style=style, no_wrap=True, overflow="ignore")
                   for line, style in zip(lines, ("cyan", "dim"))))
