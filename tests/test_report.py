"""Charts checked for geometry against the numbers they draw (recomputed here from raw lengths), and the HTML
report checked for content, escaping, absent-section notes and atomic writing."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, ExamplePreview, Profile, TokenizerInfo
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.errors import SeqprofError
from seqprof.render import charts
from seqprof.render.report import (
    padded_content_share,
    render_report,
    templates_dir,
    write_report,
)

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def _lengths(seed: int = 0, n: int = 5000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.gamma(4.0, 60.0, n - 20).astype(np.int64) + 3, rng.integers(1500, 2100, 20)])


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text)


def _all(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(NS + tag) if cls in (e.get("class") or "").split()]


def _axis_scale(root: ET.Element) -> tuple[float, float]:
    """(a, b) with px = a + b * tokens, fitted from the length axis's numeric tick labels alone."""
    pts = []
    for t in root.iter(NS + "text"):
        label = (t.text or "").replace(",", "")
        if t.get("text-anchor") == "middle" and re.fullmatch(r"\d+", label) and float(t.get("y")) > 100:
            pts.append((float(label), float(t.get("x"))))
    pts = sorted(set(pts))
    assert len(pts) >= 3
    (v0, x0), (v1, x1) = pts[0], pts[-1]
    b = (x1 - x0) / (v1 - v0)
    for v, x in pts:  # the ticks themselves are linear
        assert x == pytest.approx(x0 + b * (v - v0), abs=0.02)
    return x0 - b * v0, b


# ---- scales and bins -------------------------------------------------------------------------------

def test_ticks_are_round_and_cover_the_range():
    for lo, hi in [(0, 1126), (0, 4001), (0, 17), (0, 0.93), (0, 250_000)]:
        ts = charts.ticks(lo, hi, 6)
        steps = {round(b - a, 9) for a, b in pairwise(ts)}
        assert len(steps) == 1
        step = steps.pop()
        mantissa = step / 10 ** np.floor(np.log10(step))
        assert round(mantissa, 6) in (1, 2, 2.5, 5)
        assert ts[0] >= lo and ts[-1] <= hi + 1e-9 and hi - ts[-1] < step


def test_bins_sum_exact_counts():
    raw = _lengths()
    hist = LengthHistogram.from_lengths(raw)
    bins = charts.bin_histogram(hist, hist.max + 1)
    assert bins[0].lo == 0 and bins[-1].hi == hist.max + 1
    assert all(a.hi == b.lo for a, b in pairwise(bins))
    for b in bins:
        assert b.count == int(((raw >= b.lo) & (raw < b.hi)).sum())


# ---- histogram -----------------------------------------------------------------------------------

def test_histogram_bars_and_markers_match_the_data():
    raw = _lengths()
    hist = LengthHistogram.from_lengths(raw)
    rec = recommend_max_seq_length(hist).max_seq_length
    current = 1024
    root = _svg(charts.histogram_svg(hist, markers=charts.length_markers(hist, recommended=rec, current=current)))
    a, b = _axis_scale(root)
    bars = _all(root, "rect", "bar")
    assert sum(int(r.get("data-count")) for r in bars) == raw.size
    heights = []
    for r in bars:
        lo, hi, count = int(r.get("data-lo")), int(r.get("data-hi")), int(r.get("data-count"))
        assert count == int(((raw >= lo) & (raw < hi)).sum())
        x, w = float(r.get("x")), float(r.get("width"))
        assert x == pytest.approx(a + b * lo, abs=0.6) and x + w == pytest.approx(a + b * hi, abs=0.6)
        heights.append((float(r.get("height")), count))
    per_row = max(heights, key=lambda hc: hc[1])
    for h, count in heights:  # height proportional to count (coordinates are written to 0.01 px)
        assert h == pytest.approx(count * per_row[0] / per_row[1], abs=0.011)
    # the y axis labels (4px below their gridline) agree with the bar heights: the tallest bar's count
    grid = sorted((float(t.get("y")) - 4, int(t.text.replace(",", ""))) for t in root.iter(NS + "text")
                  if t.get("text-anchor") == "end" and re.fullmatch(r"[\d,]+", t.text or ""))
    (y_top, v_top), (y_zero, v_zero) = grid[0], grid[-1]
    tallest = max(bars, key=lambda r: int(r.get("data-count")))
    assert v_zero == 0 and float(tallest.get("y")) == pytest.approx(
        y_zero - (y_zero - y_top) * int(tallest.get("data-count")) / v_top, abs=0.05)

    expected = {"p50": np.percentile(raw, 50), "p90": np.percentile(raw, 90), "p99": np.percentile(raw, 99),
                "max": raw.max(), "recommended": rec, "current": current}
    lines = {ln.get("data-kind"): ln for ln in _all(root, "line", "marker")}
    assert set(lines) == set(expected)
    for kind, value in expected.items():
        assert float(lines[kind].get("data-value")) == pytest.approx(value)
        assert float(lines[kind].get("x1")) == pytest.approx(a + b * (value + 1), abs=0.02)  # right edge of value

    # the current cap truncates: shaded from its edge to the longest row's edge, with the brute-force count
    shade = [r for r in _all(root, "rect", "truncated") if r.get("data-kind") == "current"]
    assert len(shade) == 1
    s = shade[0]
    assert int(s.get("data-rows")) == int((raw > current).sum())
    assert float(s.get("x")) == pytest.approx(a + b * (current + 1), abs=0.02)
    assert float(s.get("x")) + float(s.get("width")) == pytest.approx(a + b * (raw.max() + 1), abs=0.02)
    pct = f"{(raw > current).mean() * 100:.1f}% truncated"
    assert any(t.text == pct for t in root.iter(NS + "text"))


def test_caps_that_truncate_nothing_shade_nothing():
    raw = _lengths(1)
    hist = LengthHistogram.from_lengths(raw)
    root = _svg(charts.histogram_svg(hist, markers=charts.length_markers(hist, recommended=int(raw.max()),
                                                                        current=int(raw.max()) + 100)))
    assert _all(root, "rect", "truncated") == []


def test_far_cap_is_labelled_not_drawn_to_scale():
    raw = _lengths(2)
    hist = LengthHistogram.from_lengths(raw)
    current = int(raw.max()) * 10  # story 1 scaled up: a cap far beyond every row
    root = _svg(charts.histogram_svg(hist, markers=charts.length_markers(hist, current=current)))
    a, b = _axis_scale(root)
    assert "current" not in {ln.get("data-kind") for ln in _all(root, "line", "marker")}
    far = _all(root, "text", "far-cap")
    assert len(far) == 1 and int(far[0].get("data-value")) == current and f"{current:,}" in far[0].text
    right = max(float(r.get("x")) + float(r.get("width")) for r in _all(root, "rect", "bar"))
    assert (right - a) / b < current / 2  # the axis stayed near the data


def test_equal_percentiles_share_one_marker():
    hist = LengthHistogram.from_lengths([17] * 50)
    markers = charts.length_markers(hist)
    assert len(markers) == 1 and markers[0].value == 17
    assert markers[0].label == "p50 · p90 · p99 · max 17"


def test_bucket_bands_tile_the_lengths():
    raw = _lengths(3)
    hist = LengthHistogram.from_lengths(raw)
    bounds = [120, 210, 330, 600, int(raw.max())]
    root = _svg(charts.histogram_svg(hist, boundaries=bounds))
    a, b = _axis_scale(root)
    bands = _all(root, "rect", "bucket")
    assert [(int(r.get("data-lo")), int(r.get("data-hi"))) for r in bands] == \
        list(zip([0] + [x + 1 for x in bounds[:-1]], bounds))
    for r in bands:
        lo, hi = int(r.get("data-lo")), int(r.get("data-hi"))
        assert float(r.get("x")) == pytest.approx(a + b * lo, abs=0.02)
        assert float(r.get("x")) + float(r.get("width")) == pytest.approx(a + b * (hi + 1), abs=0.02)
    lines = _all(root, "line", "boundary")
    assert [int(ln.get("data-value")) for ln in lines] == bounds
    for ln in lines:
        assert float(ln.get("x1")) == pytest.approx(a + b * (int(ln.get("data-value")) + 1), abs=0.02)


# ---- CDF -----------------------------------------------------------------------------------------

def test_cdf_points_are_exact_shares():
    raw = _lengths(4)
    hist = LengthHistogram.from_lengths(raw)
    root = _svg(charts.cdf_svg(hist, markers=charts.length_markers(hist)))
    a, b = _axis_scale(root)
    labels = {t.text: float(t.get("y")) for t in root.iter(NS + "text") if (t.text or "").endswith("%")}
    y0, y1 = labels["0%"] - 4, labels["100%"] - 4  # labels sit 4px below their gridline
    pts = [tuple(map(float, p.split(","))) for p in _all(root, "polyline", "cdf-line")[0].get("points").split()]
    assert len(pts) > 50
    for px, py in pts:
        edge = (px - a) / b
        assert edge == pytest.approx(round(edge), abs=0.02)
        share = (py - y0) / (y1 - y0)
        assert share == pytest.approx((raw < round(edge)).mean(), abs=0.0005)
    assert [p[1] for p in pts] == sorted((p[1] for p in pts), reverse=True)  # monotone (y grows downwards)


# ---- memory bar ------------------------------------------------------------------------------------

def test_memory_segments_stack_in_proportion_with_capacity_line():
    comps = {"weights": 15.2e9, "gradients": 0.3e9, "optimizer state": 0.6e9, "activations": 31.0e9,
             "logits (fp32)": 9.7e9}
    cap = 80 * 2**30
    root = _svg(charts.memory_bar_svg(comps, capacity=cap, capacity_label="H100"))
    segs = _all(root, "rect", "segment")
    assert [s.get("data-name") for s in segs] == list(comps)
    x0 = float(segs[0].get("x"))
    scale = float(segs[0].get("width")) / comps["weights"]
    edge = x0
    for s in segs:
        assert float(s.get("x")) == pytest.approx(edge, abs=0.02)
        assert float(s.get("width")) == pytest.approx(comps[s.get("data-name")] * scale, abs=0.02)
        edge = float(s.get("x")) + float(s.get("width"))
    line = _all(root, "line", "capacity")[0]
    assert float(line.get("x1")) == pytest.approx(x0 + cap * scale, abs=0.02)
    free = charts.fmt_bytes(cap - sum(comps.values()))
    assert free in _all(root, "text", "capacity-label")[0].text + "".join(
        t.text or "" for t in _all(root, "text", "capacity-label"))


def test_memory_over_capacity_says_by_how_much():
    comps = {"weights": 54e9, "logits": 30e9, "activations": 20e9}
    cap = 96e9
    root = _svg(charts.memory_bar_svg(comps, capacity=cap))
    label = _all(root, "text", "capacity-label")[0].text
    assert f"over by {charts.fmt_bytes(sum(comps.values()) - cap)}" in label


def test_chart_text_is_escaped():
    svg = charts.memory_bar_svg({HOSTILE: 1e9}, capacity=2e9, capacity_label=HOSTILE, title=HOSTILE)
    root = _svg(svg)  # well-formed XML: nothing broke out of its element
    assert "<script" not in svg and "<img" not in svg
    assert _all(root, "rect", "segment")[0].get("data-name") == HOSTILE


# ---- formatting and the padding arithmetic -------------------------------------------------------

def test_padded_content_share_matches_brute_force():
    raw = _lengths(5)
    hist = LengthHistogram.from_lengths(raw)
    for cap in (64, 333, 1000, 4000):
        assert padded_content_share(hist, cap) == pytest.approx(np.minimum(raw, cap).sum() / (raw.size * cap))


def test_percent_never_rounds_to_a_false_100_or_0():
    assert charts.fmt_pct(1.0) == "100%" and charts.fmt_pct(0.0) == "0%"
    assert charts.fmt_pct(2999 / 3000) == "99.97%"
    assert charts.fmt_pct(1 / 3000) == "0.03%"
    assert charts.fmt_pct(0.132) == "13.2%"


# ---- the page --------------------------------------------------------------------------------------

def _profile(preview: str = "hello") -> Profile:
    raw = _lengths(6, 800)
    hist = LengthHistogram.from_lengths(raw)
    return Profile(
        dataset=DatasetInfo(path="data/train.jsonl", format="jsonl", rows=800, skipped_rows=4, schema="text"),
        tokenizer=TokenizerInfo(name="qwen-2.5", vocab_size=151665), sequence=hist,
        fields={"text": hist}, recommendation=recommend_max_seq_length(hist),
        longest=(ExamplePreview("data/train.jsonl:9", int(raw.max()), preview),))


def test_templates_are_found():
    assert (templates_dir() / "report.html.j2").is_file()


def test_hostile_text_is_escaped_everywhere():
    html = render_report(
        _profile(preview=HOSTILE), config_path=HOSTILE, config_max_seq_length=512,
        buckets={"boundaries": [100, 300, 2100]},
        strategies={HOSTILE: {"padding_efficiency": 0.5, "padded_tokens": 10, "batches": 3, "description": HOSTILE}},
        findings=[{"code": "SP101", "severity": "warning", "message": HOSTILE, "fix": HOSTILE,
                   "file": HOSTILE, "line": 2, "key": HOSTILE}],
        memory={"components": {HOSTILE: 1e9}, "peak_bytes": 1e9, "capacity_bytes": 2e9, "gpu_name": HOSTILE})
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 7
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_nothing_is_fetched_from_anywhere():
    html = render_report(_profile(), memory={"components": {"w": 1e9}, "peak_bytes": 1e9})
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html) + re.findall(r"url\(([^)]*)\)", html)
    assert all(r.startswith("#") for r in refs), refs  # in-page anchors only
    assert "@import" not in html and "<link" not in html


def test_profile_only_report_notes_what_is_absent():
    html = render_report(_profile())
    for note in ("No bucket boundaries were given.", "No strategy comparison was given.",
                 "No memory estimate was given.", "The config was not linted."):
        assert note in html
    assert "800" in html and "qwen-2.5" in html and "data/train.jsonl" in html
    assert html.count('class="chart histogram"') == 1  # the single field equals the sequence: drawn once


def test_lint_only_report_without_profile():
    html = render_report(None, config_path="cfg.yaml", findings=[])
    assert "No dataset profile was given." in html and "No findings" in html
    assert "<svg" not in html


def test_summary_figures_come_from_the_profile():
    prof = _profile()
    raw_hist = prof.sequence
    html = render_report(prof, config_max_seq_length=512)
    share = charts.fmt_pct(padded_content_share(raw_hist, 512))
    cut = raw_hist.count_above(512)
    assert f"<b>{share}</b> of every" in html
    assert f"{cut:,} rows ({charts.fmt_pct(cut / raw_hist.count)})" in html


def test_findings_sorted_by_severity_with_config_lines():
    findings = [{"code": "SP301", "severity": "info", "message": "m3", "file": "c.yaml", "line": 9, "key": "k"},
                {"code": "SP101", "severity": "error", "message": "m1", "file": "c.yaml", "line": 4, "key": "k",
                 "fix": "set it"},
                {"code": "SP201", "severity": "warning", "message": "m2", "file": "c.yaml", "line": None, "key": "k"}]
    html = render_report(None, findings=findings)
    order = [m.group(1) for m in re.finditer(r"<code>(SP\d+)</code>", html)]
    assert order == ["SP101", "SP201", "SP301"]
    assert "c.yaml:4" in html and "set it" in html


def test_real_bucket_report_renders(tmp_path):
    from seqprof.batching.buckets import build_bucket_report

    prof = _profile()
    rep = build_bucket_report(prof.sequence, 4)
    html = render_report(prof, buckets=rep)
    assert html.count('class="bucket"') == 4
    for name in rep.simulation.strategies:
        assert name.replace("_", " ") in html
    assert charts.fmt_pct(rep.padding_efficiency) in html


def test_memory_section_against_the_gpu():
    """Components (zero ones dropped), their share of the peak, and the verdict against the GPU's capacity."""
    comps = {"weights": 15_000_000_000, "reference_model": 0, "logits": 12_000_000_000, "cuda_context": 550_000_000}
    peak = sum(comps.values())
    memory = {"peak_bytes": peak, "components": comps, "peak_phase": "backward: loss", "notes": ("AdamW",)}
    fits = render_report(None, memory=memory, gpu={"name": "H100", "memory_bytes": 80 * 2**30})
    assert "fits</span>" in fits and "reference model" not in fits and "backward: loss" in fits
    for name, b in comps.items():
        if b:
            assert f"{name.replace('_', ' ')}</td><td class=\"num\">{charts.fmt_bytes(b)}</td>" \
                   f"<td class=\"num\">{charts.fmt_pct(b / peak)}</td>" in fits
    oom = render_report(None, memory=memory, gpu={"name": "L4", "memory_bytes": 24 * 2**30})
    assert "out of memory</span>" in oom and f"over by {charts.fmt_bytes(peak - 24 * 2**30)}" in oom


def test_write_is_atomic(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("previous report")

    class Broken:
        @property
        def boundaries(self):
            raise RuntimeError("stage failed mid-render")

    with pytest.raises(RuntimeError):
        write_report(target, _profile(), buckets=Broken())
    assert target.read_text() == "previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temp file left behind
    write_report(target, _profile())
    assert target.read_text().startswith("<!DOCTYPE html>")


def test_write_into_missing_directory_is_a_seqprof_error(tmp_path):
    with pytest.raises(SeqprofError) as err:
        write_report(tmp_path / "nope" / "r.html", _profile())
    assert err.value.fix and "nope" in str(err.value)


def test_analyze_html_writes_the_report(tmp_path):
    """`seqprof analyze --html` on the embedded dataset: the page holds its figures, buckets and strategies."""
    from click.testing import CliRunner

    from seqprof.cli import main
    from seqprof.dataset.analyze import default_dataset_path

    out = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["analyze", str(default_dataset_path()), "--format", "json", "--html", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    prof = json.loads(result.stdout)  # the same run's profile, as analyze prints it
    assert f"<div class=\"kpi-value\">{prof['dataset']['rows']:,}</div>" in html
    assert f"{prof['recommendation']['max_seq_length']:,}</div>" in html
    assert html.count('class="bucket"') == 6 and "bucketed shuffle" in html
    assert "<script" not in html.lower()


STORY = Path(__file__).resolve().parent / "data" / "configs" / "auto-antislop" / "configs" / \
    "gemma-3-4b-it.yaml"


def test_lint_html_shows_the_configs_cap_and_findings(tmp_path):
    """`seqprof lint CONFIG --profile P --html`: the report carries lint's findings (with config lines), the
    config's max_seq_length (4000 at line 213 of the story config) and the simulation it ran."""
    from click.testing import CliRunner

    from seqprof.cli import main

    raw = _lengths(8, 2000)
    hist = LengthHistogram.from_lengths(raw)
    saved = tmp_path / "p.json"
    Profile(DatasetInfo("data/story.jsonl", "jsonl", raw.size, 0, "preference"), TokenizerInfo("qwen-2.5", 151665),
            hist, {}, recommend_max_seq_length(hist)).save(saved)
    out = tmp_path / "lint.html"
    result = CliRunner().invoke(main, ["lint", str(STORY), "--profile", str(saved), "--html", str(out),
                                       "--exit-zero", "--format", "json"])
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    html = out.read_text()
    assert findings and all(f"<code>{f['code']}</code>" in html for f in findings)
    assert "gemma-3-4b-it.yaml:213" in html
    share = np.minimum(raw, 4000).sum() / (raw.size * 4000)  # fixed padding to the config's 4000
    assert f"<b>{charts.fmt_pct(share)}</b> of every" in html and '<div class="kpi-value">4,000</div>' in html
    assert "your config" in html and html.count('class="bucket"') >= 1


def test_example_report_is_self_contained():
    """reports/example.html (the embedded dataset's report, from the README's command) stays a valid page."""
    example = Path(__file__).resolve().parent.parent / "reports" / "example.html"
    if not example.exists():
        pytest.skip("reports/example.html not generated")
    text = example.read_text()
    assert "python_docs_chat.jsonl" in text and "<script" not in text.lower() and "<svg" in text
    assert not re.findall(r'(?:src|href)\s*=\s*"(?!#)', text)
