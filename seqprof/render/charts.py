"""Inline SVG charts for the HTML report: plain functions from numbers to SVG strings, no JS, no network.

Geometry convention (tested against the numbers drawn): on the length axis, the sequences of exactly
L tokens occupy the column [x(L), x(L+1)); a "<= v" marker (a percentile, the longest row, a
max_seq_length, a bucket's upper bound) is drawn at the column's right edge, x(v + 1), so everything
left of the line is what the value admits. Every rect/line that stands for a number carries it in a
`data-*` attribute, so tests can check the pixels against the data without parsing labels.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from seqprof.dataset.histogram import LengthHistogram

WIDTH = 940  # about the width the page shows it at, so 12px text stays 12px
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
INK = "#1f2937"
MUTED = "#6b7280"
GRID = "#e5e7eb"
BAR = "#4f7cac"
PERCENTILE = "#475569"
RECOMMENDED = "#15803d"
CURRENT = "#b91c1c"
BOUNDARY = "#b45309"
BAND = ("#fbeccb", "#dde9f5")
SERIES = ("#4f7cac", "#e09f3e", "#6a994e", "#c05865", "#7b6fb0", "#3a9fa8", "#9c7a54", "#8d99ae")
MAX_OFF_CHART = 2.5  # a cap further than this many times the data's extent is drawn as an arrow, not to scale
CHAR_W = 6.9  # rough width of one 12px label character, for label placement only
MIN_LABEL_SEGMENT = 44  # px: narrower memory segments get no inline label


@dataclass(frozen=True)
class Linear:
    """Maps a data interval onto a pixel interval (either may be reversed)."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, v: float) -> float:
        span = self.d1 - self.d0
        return self.r0 + (v - self.d0) * (self.r1 - self.r0) / (span if span else 1.0)

    def invert(self, px: float) -> float:
        span = self.r1 - self.r0
        return self.d0 + (px - self.r0) * (self.d1 - self.d0) / (span if span else 1.0)


@dataclass(frozen=True)
class Marker:
    """A labelled vertical line at `value` on the length axis ("<= value")."""

    value: float
    label: str
    kind: str  # p50 | p90 | p99 | max | recommended | current


@dataclass(frozen=True)
class Bin:
    lo: int  # first length in the bin
    hi: int  # one past the last length
    count: int


def nice_step(span: float, target: int) -> float:
    """1-2-5 step giving about `target` intervals over `span`."""
    if span <= 0:
        return 1.0
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values within [lo, hi]."""
    step = nice_step(hi - lo, target)
    first = math.ceil(lo / step) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def bin_histogram(hist: LengthHistogram, upto: int, target_bins: int = 72) -> list[Bin]:
    """Sum exact counts into equal-width integer bins covering lengths 0..upto-1."""
    counts = np.asarray(hist.counts)
    width = max(1, math.ceil(nice_step(max(upto, 1), target_bins)))
    out: list[Bin] = []
    for lo in range(0, max(upto, 1), width):
        hi = lo + width
        c = int(counts[lo:min(hi, counts.size)].sum()) if lo < counts.size else 0
        out.append(Bin(lo, min(hi, upto), c))
    return out


def fmt_int(v: float) -> str:
    return f"{round(v):,}"


def fmt_len(v: float) -> str:
    """Lengths: integers plainly, interpolated percentiles with one decimal."""
    return f"{v:,.1f}".removesuffix(".0")


def fmt_pct(share: float) -> str:
    """One decimal, more only where rounding would claim 0% or 100% that is not exact."""
    if share <= 0 or share >= 1:
        return f"{share * 100:g}%"
    for digits in (1, 2, 3):
        text = f"{share * 100:.{digits}f}"
        if text not in ("0." + "0" * digits, "100." + "0" * digits):
            return text + "%"
    return "<0.001%" if share < 0.5 else ">99.999%"


def fmt_bytes(n: float) -> str:
    """GiB with two significant decimals (80 GB cards are 80 GiB)."""
    gib = n / 2**30
    if gib >= 100:
        return f"{gib:,.0f} GiB"
    if gib >= 1:
        return f"{gib:.1f} GiB"
    return f"{n / 2**20:,.0f} MiB"


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def _f(v: float) -> str:
    """Coordinates with two decimals: compact and exact enough for geometry tests."""
    return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else str(int(v))


def _svg_open(width: float, height: float, label: str, cls: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {cls}" viewBox="0 0 {_f(width)} {_f(height)}" '
            f'width="{_f(width)}" height="{_f(height)}" role="img" aria-label="{_e(label)}" '
            f'font-family="{_e(FONT)}" font-size="12">'
            f'<title>{_e(label)}</title>')


def _length_domain(hist: LengthHistogram, markers: Sequence[Marker], boundaries: Sequence[int]) -> tuple[int, list[Marker]]:
    """Upper end of the length axis, and the markers too far right to draw to scale."""
    extent = hist.max + 1
    for b in boundaries:
        extent = max(extent, int(b) + 1)
    caps = [m for m in markers if m.kind in ("recommended", "current")]
    near = [m for m in caps if m.value + 1 <= MAX_OFF_CHART * extent]
    far = [m for m in caps if m not in near]
    for m in near:
        extent = max(extent, math.ceil(m.value) + 1)
    step = nice_step(extent, 6)
    top = int(math.ceil((extent - 1) / step) * step)  # a cap at 4000 needs edge 4001, not a 5000 axis
    return max(top, extent, 1), far


def _place_labels(xs: Sequence[float], texts: Sequence[str], left: float, right: float) -> list[int]:
    """Greedy row assignment so marker labels do not overlap; returns the row of each label."""
    rows_end: list[float] = []
    out = [0] * len(xs)
    for i in sorted(range(len(xs)), key=lambda i: xs[i]):
        w = len(texts[i]) * CHAR_W + 6
        x0 = min(max(xs[i] - w / 2, left), right - w)
        for r, end in enumerate(rows_end):
            if x0 >= end:
                rows_end[r] = x0 + w
                out[i] = r
                break
        else:
            rows_end.append(x0 + w)
            out[i] = len(rows_end) - 1
    return out


_MARKER_STYLE = {
    "p50": (PERCENTILE, "3 3", 1.0), "p90": (PERCENTILE, "3 3", 1.0), "p99": (PERCENTILE, "3 3", 1.0),
    "max": (INK, "1 2", 1.2), "recommended": (RECOMMENDED, "", 2.0), "current": (CURRENT, "6 3", 2.0),
}


def length_markers(hist: LengthHistogram, *, recommended: int | None = None,
                   current: int | None = None) -> list[Marker]:
    """The standard markers of a length chart: p50/p90/p99/max and the two max_seq_length caps."""
    if hist.count == 0:
        return []
    s = hist.stats()
    out: list[Marker] = []
    for kind, value in (("p50", s.p50), ("p90", s.p90), ("p99", s.p99), ("max", float(s.max))):
        if out and out[-1].value == value:  # equal percentiles share one line and one label: "p99 · max 17"
            prev = out.pop()
            out.append(Marker(value, f"{prev.label.rsplit(' ', 1)[0]} · {kind} {fmt_len(value)}", kind))
        else:
            out.append(Marker(value, f"{kind} {fmt_len(value)}", kind))
    if recommended is not None:
        out.append(Marker(recommended, f"recommended {fmt_int(recommended)}", "recommended"))
    if current is not None:
        out.append(Marker(current, f"current {fmt_int(current)}", "current"))
    return out


def _truncated_regions(hist: LengthHistogram, markers: Sequence[Marker]) -> list[tuple[Marker, int]]:
    """Caps that cut rows off, with how many rows they cut (sequences longer than the cap)."""
    return [(m, hist.count_above(int(m.value))) for m in markers
            if m.kind in ("recommended", "current") and hist.count_above(int(m.value)) > 0]


def histogram_svg(hist: LengthHistogram, *, markers: Sequence[Marker] = (), boundaries: Sequence[int] = (),
                  title: str = "length histogram", height: int = 260, width: int = WIDTH,
                  target_bins: int = 72) -> str:
    """Bars of exact counts binned by length, with percentile/cap markers, truncated share shaded,
    and solved bucket boundaries drawn as bands over the bars."""
    left, right, bottom = 52.0, width - 14.0, 24.0
    upto, far = _length_domain(hist, markers, boundaries)
    x = Linear(0, upto, left, right)
    near_markers = [m for m in markers if m not in far]
    # far caps are labelled at the right edge, in the same label rows as the others
    label_rows = _place_labels([x(m.value + 1) for m in near_markers] + [right] * len(far),
                               [m.label for m in near_markers] + [_far_label(m) for m in far], left, right)
    top_rows = (max(label_rows) + 1) if label_rows else 0
    top = 12.0 + 14.0 * top_rows + (14.0 if boundaries and not top_rows else 0.0)
    plot_h = height - top - bottom
    bins = bin_histogram(hist, upto, target_bins)
    peak = max((b.count for b in bins), default=0)
    step = nice_step(peak, 4)
    ymax = math.ceil(peak / step) * step if peak else 1  # headroom: the tallest bar never meets the labels
    y_ticks = ticks(0, ymax, 4) if peak else [0]
    y = Linear(0, ymax, top + plot_h, top)
    parts = [_svg_open(width, height, title, "histogram")]

    # bucket bands under everything, so the bars read on top of them
    prev = -1
    for i, b in enumerate(boundaries):
        x0, x1 = x(prev + 1), x(int(b) + 1)
        parts.append(f'<rect class="bucket" data-lo="{prev + 1}" data-hi="{int(b)}" x="{_f(x0)}" y="{_f(top)}" '
                     f'width="{_f(x1 - x0)}" height="{_f(plot_h)}" fill="{BAND[i % 2]}"/>')
        if x1 - x0 >= 14:
            parts.append(f'<text x="{_f((x0 + x1) / 2)}" y="{_f(top - 4)}" text-anchor="middle" fill="{BOUNDARY}" '
                         f'font-weight="600">{i + 1}</text>')
        prev = int(b)

    for t in y_ticks:
        parts.append(f'<line class="grid" x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y(t))}" y2="{_f(y(t))}" '
                     f'stroke="{GRID}"/>')
        parts.append(f'<text x="{_f(left - 6)}" y="{_f(y(t) + 4)}" text-anchor="end" fill="{MUTED}">{fmt_int(t)}</text>')

    # truncated share, drawn as a shaded band from the cap to the longest row
    for m, n_cut in _truncated_regions(hist, near_markers):
        x0, x1 = x(int(m.value) + 1), x(hist.max + 1)
        colour = CURRENT if m.kind == "current" else RECOMMENDED
        parts.append(f'<rect class="truncated" data-kind="{m.kind}" data-from="{int(m.value) + 1}" '
                     f'data-to="{hist.max}" data-rows="{n_cut}" x="{_f(x0)}" y="{_f(top)}" width="{_f(x1 - x0)}" '
                     f'height="{_f(plot_h)}" fill="{colour}" fill-opacity="0.10"/>')
        share = n_cut / hist.count
        if x1 - x0 > 70:
            parts.append(f'<text x="{_f((x0 + x1) / 2)}" y="{_f(top + 14)}" text-anchor="middle" fill="{colour}" '
                         f'font-weight="600">{fmt_pct(share)} truncated</text>')

    for b in bins:
        if not b.count:
            continue
        x0, x1 = x(b.lo), x(b.hi)
        y0 = y(b.count)
        gap = 0.6 if x1 - x0 > 3 else 0
        parts.append(f'<rect class="bar" data-lo="{b.lo}" data-hi="{b.hi}" data-count="{b.count}" '
                     f'x="{_f(x0 + gap / 2)}" y="{_f(y0)}" width="{_f(max(x1 - x0 - gap, 0.5))}" '
                     f'height="{_f(top + plot_h - y0)}" fill="{BAR}"><title>{fmt_int(b.lo)}–{fmt_int(b.hi - 1)} tokens: '
                     f'{fmt_int(b.count)} rows</title></rect>')

    for b in boundaries:
        xb = x(int(b) + 1)
        parts.append(f'<line class="boundary" data-value="{int(b)}" x1="{_f(xb)}" x2="{_f(xb)}" y1="{_f(top)}" '
                     f'y2="{_f(top + plot_h)}" stroke="{BOUNDARY}" stroke-width="1.5"/>')

    parts.append(_length_axis(x, upto, top + plot_h, left, right))
    parts.append(_marker_lines(x, near_markers, label_rows[:len(near_markers)], top, plot_h, left, right))
    parts.append(_far_caps(far, label_rows[len(near_markers):], right, top))
    parts.append("</svg>")
    return "".join(parts)


def _length_axis(x: Linear, upto: int, y0: float, left: float, right: float) -> str:
    parts = [f'<line class="axis" x1="{_f(left)}" x2="{_f(right)}" y1="{_f(y0)}" y2="{_f(y0)}" stroke="{MUTED}"/>']
    for t in ticks(0, upto, max(3, int((right - left) / 110))):
        parts.append(f'<line x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{_f(y0)}" y2="{_f(y0 + 4)}" stroke="{MUTED}"/>')
        parts.append(f'<text x="{_f(x(t))}" y="{_f(y0 + 16)}" text-anchor="middle" fill="{MUTED}">{fmt_int(t)}</text>')
    parts.append(f'<text x="{_f(left - 10)}" y="{_f(y0 + 16)}" text-anchor="end" fill="{MUTED}">tokens</text>')
    return "".join(parts)


def _marker_lines(x: Linear, markers: Sequence[Marker], rows: Sequence[int], top: float, plot_h: float,
                  left: float, right: float) -> str:
    parts = []
    for m, row in zip(markers, rows):
        colour, dash, w = _MARKER_STYLE[m.kind]
        xm = x(m.value + 1)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<line class="marker" data-kind="{m.kind}" data-value="{m.value:g}" x1="{_f(xm)}" x2="{_f(xm)}" '
                     f'y1="{_f(top)}" y2="{_f(top + plot_h)}" stroke="{colour}" stroke-width="{w}"{dash_attr}/>')
        if m.label:
            tw = len(m.label) * CHAR_W
            tx = min(max(xm, left + tw / 2), right - tw / 2)
            ty = top - 4 - 14 * row
            weight = ' font-weight="600"' if m.kind in ("recommended", "current") else ""
            parts.append(f'<text class="marker-label" x="{_f(tx)}" y="{_f(ty)}" text-anchor="middle" '
                         f'fill="{colour}"{weight}>{_e(m.label)}</text>')
    return "".join(parts)


def _far_label(m: Marker) -> str:
    return f"{m.label} (off scale) →"


def _far_caps(far: Sequence[Marker], rows: Sequence[int], right: float, top: float) -> str:
    """A cap far beyond the data: a label at the right edge saying where it is, not a squashed chart."""
    parts = []
    for m, row in zip(far, rows):
        colour = _MARKER_STYLE[m.kind][0]
        parts.append(f'<text class="far-cap" data-kind="{m.kind}" data-value="{int(m.value)}" x="{_f(right)}" '
                     f'y="{_f(top - 4 - 14 * row)}" text-anchor="end" fill="{colour}" font-weight="600">'
                     f'{_e(_far_label(m))}</text>')
    return "".join(parts)


def cdf_points(hist: LengthHistogram, upto: int, max_points: int = 400) -> list[tuple[int, float]]:
    """(edge e, share of rows shorter than e) at up to `max_points` edges in 0..upto, exact at each."""
    n = hist.count
    counts = np.asarray(hist.counts)
    cum = np.concatenate([[0], np.cumsum(counts)])  # cum[e] = rows with length < e
    step = max(1, math.ceil(upto / max_points))
    edges = list(range(0, upto + 1, step))
    if edges[-1] != upto:
        edges.append(upto)
    return [(e, float(cum[min(e, cum.size - 1)]) / n if n else 0.0) for e in edges]


def cdf_svg(hist: LengthHistogram, *, markers: Sequence[Marker] = (), boundaries: Sequence[int] = (),
            title: str = "cumulative share", height: int = 200, width: int = WIDTH) -> str:
    """Share of rows at or under each length, on the same length axis as histogram_svg."""
    left, right, top, bottom = 52.0, width - 14.0, 10.0, 24.0
    upto, far = _length_domain(hist, markers, boundaries)
    x = Linear(0, upto, left, right)
    plot_h = height - top - bottom
    y = Linear(0, 1, top + plot_h, top)
    near = [m for m in markers if m not in far]
    parts = [_svg_open(width, height, title, "cdf")]
    for share in (0.0, 0.5, 0.9, 1.0):
        yy = y(share)
        parts.append(f'<line class="grid" x1="{_f(left)}" x2="{_f(right)}" y1="{_f(yy)}" y2="{_f(yy)}" stroke="{GRID}"/>')
        if share == 0.9 and plot_h * 0.1 < 14:  # too close to 100% to label
            continue
        parts.append(f'<text x="{_f(left - 6)}" y="{_f(yy + 4)}" text-anchor="end" fill="{MUTED}">'
                     f'{share * 100:g}%</text>')
    for m, n_cut in _truncated_regions(hist, near):
        x0, x1 = x(int(m.value) + 1), x(hist.max + 1)
        colour = CURRENT if m.kind == "current" else RECOMMENDED
        parts.append(f'<rect class="truncated" data-kind="{m.kind}" data-rows="{n_cut}" x="{_f(x0)}" '
                     f'y="{_f(top)}" width="{_f(x1 - x0)}" height="{_f(plot_h)}" fill="{colour}" fill-opacity="0.10"/>')
    for b in boundaries:
        xb = x(int(b) + 1)
        parts.append(f'<line class="boundary" data-value="{int(b)}" x1="{_f(xb)}" x2="{_f(xb)}" y1="{_f(top)}" '
                     f'y2="{_f(top + plot_h)}" stroke="{BOUNDARY}" stroke-width="1"/>')
    for m in near:
        colour, dash, w = _MARKER_STYLE[m.kind]
        xm = x(m.value + 1)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<line class="marker" data-kind="{m.kind}" data-value="{m.value:g}" x1="{_f(xm)}" '
                     f'x2="{_f(xm)}" y1="{_f(top)}" y2="{_f(top + plot_h)}" stroke="{colour}" '
                     f'stroke-width="{min(w, 1.5)}"{dash_attr}/>')
    pts = cdf_points(hist, upto)
    path = " ".join(f"{_f(x(e))},{_f(y(s))}" for e, s in pts)
    parts.append(f'<polyline class="cdf-line" points="{path}" fill="none" stroke="{BAR}" stroke-width="2" '
                 f'stroke-linejoin="round"/>')
    parts.append(_length_axis(x, upto, top + plot_h, left, right))
    parts.append("</svg>")
    return "".join(parts)


def series_colours(n: int) -> list[str]:
    """The colours memory_bar_svg gives its components, in order, for a matching HTML legend."""
    return [SERIES[i % len(SERIES)] for i in range(n)]


def memory_bar_svg(components: Mapping[str, float], *, capacity: float | None = None,
                   capacity_label: str = "GPU capacity", title: str = "memory breakdown",
                   width: int = WIDTH, height: int = 96) -> str:
    """One horizontal bar: each component's bytes stacked left to right, the GPU's capacity as a line."""
    left, right, top = 14.0, width - 14.0, 30.0
    bar_h = 34.0
    items = [(str(k), float(v)) for k, v in components.items() if float(v) > 0]
    total = sum(v for _, v in items)
    hi = max(total, capacity or 0.0) * 1.04 or 1.0
    tick_vals = ticks(0, hi / 2**30, 6)
    hi = max(hi, tick_vals[-1] * 2**30)
    x = Linear(0, hi, left, right)
    parts = [_svg_open(width, height, title, "memory")]
    for t in tick_vals:
        xt = x(t * 2**30)
        parts.append(f'<line class="grid" x1="{_f(xt)}" x2="{_f(xt)}" y1="{_f(top - 4)}" y2="{_f(top + bar_h + 4)}" '
                     f'stroke="{GRID}"/>')
        parts.append(f'<text x="{_f(xt)}" y="{_f(top + bar_h + 18)}" text-anchor="middle" fill="{MUTED}">'
                     f'{t:g}</text>')
    parts.append(f'<text x="{_f(right)}" y="{_f(top + bar_h + 30)}" text-anchor="end" fill="{MUTED}">GiB</text>')
    acc = 0.0
    for (name, v), colour in zip(items, series_colours(len(items))):
        x0, x1 = x(acc), x(acc + v)
        parts.append(f'<rect class="segment" data-name="{_e(name)}" data-bytes="{int(v)}" x="{_f(x0)}" y="{_f(top)}" '
                     f'width="{_f(x1 - x0)}" height="{_f(bar_h)}" fill="{colour}" stroke="#fff" stroke-width="1">'
                     f'<title>{_e(name)}: {fmt_bytes(v)}</title></rect>')
        if x1 - x0 >= MIN_LABEL_SEGMENT:
            label = name if len(name) * CHAR_W + 8 <= x1 - x0 else name[: max(1, int((x1 - x0 - 12) / CHAR_W))] + "…"
            parts.append(f'<text x="{_f((x0 + x1) / 2)}" y="{_f(top + bar_h / 2 + 4)}" text-anchor="middle" '
                         f'fill="#fff" font-weight="600">{_e(label)}</text>')
        acc += v
    parts.append(f'<text x="{_f(left)}" y="{_f(top - 10)}" fill="{INK}" font-weight="600">peak {fmt_bytes(total)}</text>')
    if capacity:
        xc = x(capacity)
        fits = total <= capacity
        colour = RECOMMENDED if fits else CURRENT
        parts.append(f'<line class="capacity" data-bytes="{int(capacity)}" x1="{_f(xc)}" x2="{_f(xc)}" '
                     f'y1="{_f(top - 8)}" y2="{_f(top + bar_h + 6)}" stroke="{colour}" stroke-width="2.5"/>')
        verdict = (f"{fmt_bytes(capacity - total)} free" if fits else f"over by {fmt_bytes(total - capacity)}")
        anchor = "end" if xc > left + 200 else "start"
        parts.append(f'<text class="capacity-label" x="{_f(xc + (-6 if anchor == "end" else 6))}" y="{_f(top - 10)}" '
                     f'text-anchor="{anchor}" fill="{colour}" font-weight="600">{_e(capacity_label)} '
                     f'{fmt_bytes(capacity)} · {verdict}</text>')
    parts.append("</svg>")
    return "".join(parts)
