"""A Profile as a readable terminal table with a small histogram (rich)."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import Profile

_BARS = " ▁▂▃▄▅▆▇█"


def sparkline(hist: LengthHistogram, width: int = 48) -> str:
    """Counts binned into `width` equal-width length bins, drawn with block characters."""
    if hist.count == 0:
        return ""
    counts = hist.counts
    edges = np.linspace(0, hist.max + 1, width + 1)
    cum = np.concatenate([[0], np.cumsum(counts)])
    idx = np.clip(np.ceil(edges).astype(int), 0, counts.size)
    binned = np.diff(cum[idx])
    top = binned.max() or 1
    return "".join(_BARS[int(np.ceil(b / top * (len(_BARS) - 1)))] for b in binned)


def profile_renderable(profile: Profile) -> Group:
    ds, rec = profile.dataset, profile.recommendation
    head = Text.assemble(
        ("dataset ", "bold"), f"{ds.path}  ({ds.format}, schema {ds.schema}, {ds.rows:,} rows",
        f", {ds.skipped_rows:,} skipped" if ds.skipped_rows else "", ")\n",
        ("tokenizer ", "bold"), f"{profile.tokenizer.name} (vocab {profile.tokenizer.vocab_size:,})",
    )
    table = Table(title="token lengths", title_justify="left")
    table.add_column("field", no_wrap=True)
    for col in ("count", "mean", "min", "p50", "p90", "p99", "max", "total"):  # p95 is in --format json
        table.add_column(col, justify="right", no_wrap=True)
    rows = [("sequence", profile.sequence)] + sorted(profile.fields.items())
    for name, hist in rows:
        s = hist.stats()
        table.add_row(Text(name), f"{s.count:,}", f"{s.mean:,.1f}", f"{s.min:,}", _num(s.p50), _num(s.p90),
                      _num(s.p99), f"{s.max:,}", f"{s.total_tokens:,}",
                      style="bold" if name == "sequence" else None)
    spark = Text.assemble(("sequence lengths 0…", "dim"), (f"{profile.sequence.max:,}", "dim"), "\n",
                          (sparkline(profile.sequence), "cyan"))
    advice = Text.assemble(
        ("recommended max_seq_length ", "bold"), (f"{rec.max_seq_length:,}", "bold green"),
        f"  covers {rec.coverage:.2%} of rows, truncates {rec.truncated_rows:,}",
    )
    return Group(head, table, spark, advice)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"
