"""The HTML report: one self-contained page (inline CSS + SVG, no scripts, no network) from the stages' value objects."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import Profile
from seqprof.errors import SeqprofError
from seqprof.render import charts

TEMPLATE = "report.html.j2"
PREVIEW_CHARS = 360
DEFAULT_REPORT_BUCKETS = 6  # analyze --html solves this many buckets (the drafter story's six)
FIELD_CHART_WIDTH = 470  # per-field charts sit two to a row; drawn at that size so their text stays readable
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def templates_dir() -> Path:
    """Where the templates are: inside the wheel (seqprof/reports), else the source checkout's reports/."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "reports"
    return installed if installed.is_dir() else package.parent / "reports"


def padded_content_share(hist: LengthHistogram, cap: int) -> float:
    """Share of tokens that are content when every row is padded (or cut) to `cap`: the fixed-length cost."""
    if hist.count == 0 or cap <= 0:
        return 0.0
    kept = sum(min(length, cap) * n for length, n in hist.items())
    return kept / (hist.count * cap)


def render_report(profile: Profile | None = None, *, buckets: Any = None, strategies: Any = None,
                  findings: Iterable[Any] | None = None, memory: Any = None, gpu: Any = None,
                  config_max_seq_length: int | None = None, config_path: str | None = None,
                  current_strategy: str | None = None, num_buckets: int | None = None,
                  lint: Any = None, lint_options: Any = None, title: str | None = None) -> str:
    """The report as one HTML string; every section renders from what it is given and says when it is absent.

    `lint` (a LintResult, with the LintOptions it ran under) fills whatever was not given explicitly: findings,
    the first config's profile, max_seq_length, simulation and memory. `num_buckets` solves boundaries from the
    profile when no bucket report is given (what `analyze --html` shows)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    from markupsafe import Markup

    if lint is not None:
        given = {"profile": profile, "buckets": buckets, "findings": findings, "memory": memory, "gpu": gpu,
                 "config_max_seq_length": config_max_seq_length, "config_path": config_path,
                 "current_strategy": current_strategy}
        for name, value in _lint_inputs(lint, lint_options).items():
            if given.get(name) is None:
                given[name] = value
        profile, buckets, findings, memory, gpu = (given[k] for k in ("profile", "buckets", "findings", "memory", "gpu"))
        config_max_seq_length, config_path = given["config_max_seq_length"], given["config_path"]
        current_strategy = given["current_strategy"]
    if buckets is None and num_buckets and profile is not None and profile.sequence.count:
        buckets = _solve_buckets(profile, num_buckets, config_max_seq_length)

    env = Environment(loader=FileSystemLoader(str(templates_dir())), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(commas=charts.fmt_int, tokens=charts.fmt_len, pct=charts.fmt_pct, gib=charts.fmt_bytes)
    current = int(config_max_seq_length) if config_max_seq_length else None
    boundaries = _boundaries(buckets)
    context = {
        "title": title or _default_title(profile, config_path),
        "version": _version(),
        "config_path": config_path,
        "dataset": _dataset_view(profile, current),
        "fields": _fields_view(profile, current, Markup),
        "buckets": _buckets_view(profile, buckets, boundaries, Markup),
        "strategies": _strategies_view(strategies if strategies is not None else _strategies_of(buckets),
                                       current_strategy or _get(buckets, "current_name")),
        "memory": _memory_view(memory, gpu, Markup),
        "findings": _findings_view(findings),
        "longest": _longest_view(profile),
    }
    return env.get_template(TEMPLATE).render(**context)


def write_report(path: str | Path, profile: Profile | None = None, **kwargs: Any) -> Path:
    """Render, then write atomically: a failed run never leaves a half-written report behind."""
    from seqprof.outputs import check_output, write_output

    check_output(path, "--html")
    return write_output(path, render_report(profile, **kwargs), "--html")


# ---- value objects -> plain view data (attribute or mapping access, so each stage's object fits) ----

def _get(obj: Any, *names: str, default: Any = None) -> Any:
    if obj is None:
        return default
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return default


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("seqprof")
    except Exception:  # noqa: BLE001 - a source checkout without metadata still renders
        return "dev"


def _default_title(profile: Profile | None, config_path: str | None) -> str:
    if profile is not None:
        return f"seqprof · {Path(profile.dataset.path).name or profile.dataset.path}"
    return f"seqprof · {Path(config_path).name}" if config_path else "seqprof report"


def _dataset_view(profile: Profile | None, current: int | None) -> dict | None:
    if profile is None:
        return None
    seq = profile.sequence
    s = seq.stats()
    rec = profile.recommendation
    view = {
        "path": _display_path(profile.dataset.path), "format": profile.dataset.format, "schema": profile.dataset.schema,
        "rows": profile.dataset.rows, "skipped_rows": profile.dataset.skipped_rows,
        "tokenizer": profile.tokenizer.name, "vocab_size": profile.tokenizer.vocab_size,
        "stats": s, "recommended": rec.max_seq_length, "coverage": rec.coverage,
        "rec_truncated": rec.truncated_rows,
        "rec_share": padded_content_share(seq, rec.max_seq_length),
        "current": current, "cur_truncated": None, "cur_share": None,
    }
    if current is not None:
        view["cur_truncated"] = seq.count_above(current)
        view["cur_share"] = padded_content_share(seq, current)
    return view


def _fields_view(profile: Profile | None, current: int | None, markup: Any) -> list[dict]:
    if profile is None or profile.sequence.count == 0:
        return []
    out = []
    named = [("sequence", profile.sequence, True)] + [(k, h, False) for k, h in profile.fields.items()
                                                       if h.count and h != profile.sequence]
    for name, hist, is_sequence in named:
        markers = charts.length_markers(hist, recommended=profile.recommendation.max_seq_length if is_sequence else None,
                                        current=current if is_sequence else None)
        size = {"width": charts.WIDTH} if is_sequence else {"width": FIELD_CHART_WIDTH}
        out.append({
            "name": name, "is_sequence": is_sequence, "stats": hist.stats(),
            "histogram": markup(charts.histogram_svg(hist, markers=markers, title=f"{name}: length histogram",
                                                     height=280 if is_sequence else 200, **size)),
            "cdf": markup(charts.cdf_svg(hist, markers=markers, title=f"{name}: cumulative share of rows",
                                         height=170 if is_sequence else 120, **size)),
        })
    return out


def _boundaries(buckets: Any) -> list[int]:
    if buckets is None:
        return []
    raw = buckets if isinstance(buckets, (list, tuple)) else _get(buckets, "boundaries", default=[])
    return [int(b) for b in raw]


def _buckets_view(profile: Profile | None, buckets: Any, boundaries: list[int], markup: Any) -> dict | None:
    if not boundaries:
        return None
    cap = _get(buckets, "max_seq_length")
    view: dict[str, Any] = {"boundaries": boundaries, "chart": None, "rows": [], "beyond": 0, "cap": cap,
                            "padding_efficiency": _get(buckets, "padding_efficiency",
                                                       default=_get(_get(buckets, "bucketed"), "padding_efficiency")),
                            "batch_size": _get(buckets, "batch_size"), "token_budget": _get(buckets, "token_budget")}
    if profile is None or not profile.sequence.count:
        return view
    seq = profile.sequence
    view["chart"] = markup(charts.histogram_svg(seq, boundaries=boundaries, title="bucket boundaries over the lengths",
                                                height=250))
    stats = list(_get(buckets, "buckets", default=()) or ())  # BucketStats, when the buckets stage gave them
    counts = seq.counts
    prev = -1
    for i, b in enumerate(boundaries):
        n = int(counts[prev + 1:b + 1].sum())
        row = {"index": i + 1, "lo": prev + 1, "hi": b, "rows": n, "share": n / seq.count,
               "colour": charts.BAND[i % 2], "fill": None}
        if i < len(stats):
            real, pad = _get(stats[i], "real_tokens"), _get(stats[i], "pad_to_bound")
            if real is not None and pad is not None and real + pad:
                row["fill"] = real / (real + pad)
        view["rows"].append(row)
        prev = b
    view["beyond"] = seq.count_above(boundaries[-1])
    return view


def _strategies_of(buckets: Any) -> Any:
    """A BucketReport keeps its comparison in .simulation.strategies, lint's SimFacts one attribute per strategy."""
    sim = _get(buckets, "simulation")
    if sim is not None:
        return _get(sim, "strategies")
    if _get(buckets, "current_name") is not None:
        results = [_get(buckets, a) for a in ("fixed", "random", "sorted", "group_by_length", "bucketed", "packing")]
        return {r.name: r for r in results if r is not None}
    return _get(buckets, "strategies")


def _strategies_view(strategies: Any, current: str | None = None) -> list[dict] | None:
    if not strategies:
        return None
    from seqprof.predict.runtime import format_duration
    items = list(strategies.items()) if isinstance(strategies, Mapping) else \
        [(_get(s, "name", "strategy", default=f"strategy {i + 1}"), s) for i, s in enumerate(strategies)]
    rows = []
    for name, s in items:
        eff = _get(s, "padding_efficiency")
        rows.append({"key": str(name), "name": _label(str(name)), "padding_efficiency": None if eff is None else float(eff),
                     "padded_tokens": _get(s, "padded_tokens"), "batches": _get(s, "batches"),
                     "speedup": _get(s, "speedup_vs_fixed"), "epoch_seconds": _get(s, "epoch_seconds"),
                     "epoch_time": format_duration(_get(s, "epoch_seconds")) if _get(s, "epoch_seconds") else None,
                     "tokens_per_second": _get(s, "tokens_per_second"),
                     "similarity": _get(s, "consecutive_similarity"), "repeated": _get(s, "repeated_batches"),
                     "diversity": _get(s, "diversity"), "note": _get(s, "description", "note"),
                     "current": current is not None and str(name) == current})
    # the comparison's own pick, if it names one: the most efficient is not the best when it kills diversity
    chosen = _get(strategies, "recommended", "chosen", "best")
    chosen = _get(chosen, "name", default=chosen)
    for r in rows:
        r["best"] = chosen is not None and r["key"] == str(chosen)
    return rows


def _memory_view(memory: Any, gpu_info: Any, markup: Any) -> dict | None:
    if memory is None:
        return None
    components = dict(_get(memory, "components", default={}) or {})
    peak = _get(memory, "peak_bytes")
    peak = float(peak) if peak is not None else float(sum(components.values()))
    gpu_obj = _get(memory, "gpu") if not isinstance(_get(memory, "gpu"), str) else None
    capacity = _get(memory, "capacity_bytes", "gpu_capacity_bytes", "gpu_memory_bytes", "capacity") \
        or _get(gpu_obj, "memory_bytes", "capacity_bytes") or _get(gpu_info, "memory_bytes", "capacity_bytes")
    capacity = float(capacity) if capacity else None
    gpu = _get(memory, "gpu_name", "gpu")
    gpu = gpu if isinstance(gpu, str) else (_get(gpu_obj, "name") or _get(gpu_info, "name"))
    shown = {_label(str(k)): float(v) for k, v in components.items() if float(v) > 0}
    colours = charts.series_colours(len(shown))
    return {
        "peak": peak, "capacity": capacity, "gpu": gpu, "fits": capacity is None or peak <= capacity,
        "chart": markup(charts.memory_bar_svg(shown, capacity=capacity, capacity_label=gpu or "GPU capacity")),
        "rows": [{"name": k, "bytes": v, "share": v / peak if peak else 0.0, "colour": c}
                 for (k, v), c in zip(shown.items(), colours)],
        "unaccounted": peak - sum(shown.values()),
        "phase": _get(memory, "peak_phase") or None, "notes": list(_get(memory, "notes", default=()) or ()),
    }


def _solve_buckets(profile: Profile, num_buckets: int, cap: int | None) -> Any:
    """The buckets stage's report on this profile (its defaults); None when it cannot solve (too few lengths)."""
    from seqprof.batching.buckets import build_bucket_report

    try:
        return build_bucket_report(profile.sequence, num_buckets, max_seq_length=cap)
    except SeqprofError:
        return None


def _lint_inputs(result: Any, options: Any) -> dict[str, Any]:
    """What a lint run knows, as report inputs: its findings and its first config's facts (reused when the
    FileReport keeps them, else rebuilt once here from the same options)."""
    files = list(_get(result, "files", default=()) or ())
    out: dict[str, Any] = {"findings": list(_get(result, "findings", default=()) or ())}
    if not files:
        return out
    first = files[0]
    out["config_path"] = ", ".join(str(f.path) for f in files)
    facts = _get(first, "facts")
    if facts is None:
        from seqprof.config.read import read_plan
        from seqprof.lint.facts import build_facts, gpu_facts
        from seqprof.lint.run import load_lint_profile

        settings = first.settings
        profile = load_lint_profile(_get(options, "data"), _get(options, "profile"), settings.tokenizer,
                                    workers=_get(options, "workers") or 1)
        plan = read_plan(str(first.path), dialect=_get(options, "dialect"))
        facts = build_facts(plan, profile, gpu=gpu_facts(settings.gpu, settings.gpu_memory),
                            world_size=_get(options, "world_size"))
    memory = _get(facts, "memory")
    if _get(facts, "sim") is None and _get(facts, "profile") is not None:
        from seqprof.lint.facts import (
            build_facts,  # lint skipped the simulation (no rule read it): report shows it
        )

        facts = build_facts(facts.plan, facts.profile, gpu=facts.gpu, world_size=facts.cfg.get("world_size"))
    cap = _get(_get(facts, "data"), "cap")
    if cap is None:
        plan = _get(facts, "plan")
        cap = plan.get("max_seq_length") if plan is not None else None
    out.update(profile=_get(facts, "profile"), buckets=_get(facts, "sim"), memory=memory,
               gpu=_get(facts, "gpu"), config_max_seq_length=cap if isinstance(cap, int) else None,
               current_strategy=_get(_get(facts, "sim"), "current_name"))
    return out


def _findings_view(findings: Iterable[Any] | None) -> list[dict] | None:
    if findings is None:
        return None
    rows = []
    for f in findings:
        sev = _get(f, "severity", default="info")
        sev = str(getattr(sev, "value", sev)).lower()  # a str or an Enum of str
        rows.append({"code": _get(f, "code", default=""), "severity": sev, "message": _get(f, "message", default=""),
                     "fix": _get(f, "fix"), "file": _get(f, "file"), "line": _get(f, "line"), "key": _get(f, "key"),
                     "file_name": Path(str(_get(f, "file") or "")).name})
    rows.sort(key=lambda r: (SEVERITY_ORDER.get(r["severity"], 9), str(r["file"] or ""), r["line"] or 0, r["code"]))
    return rows


def _longest_view(profile: Profile | None) -> list[dict]:
    if profile is None:
        return []
    out = []
    for e in profile.longest:
        text = e.preview if len(e.preview) <= PREVIEW_CHARS else e.preview[:PREVIEW_CHARS].rstrip() + " …"
        out.append({"location": _display_path(e.location), "length": e.length, "preview": text})
    return out


def _label(name: str) -> str:
    """Identifier-style names (fixed_padding, cuda_context) read as words; anything else is shown as given."""
    return name.replace("_", " ") if re.fullmatch(r"\w+", name) else name


def _display_path(where: str) -> str:
    """Paths under the working directory shown relative to it (a report should not leak /home/you/...)."""
    cwd = str(Path.cwd())
    if where.startswith(cwd + os.sep):
        return where[len(cwd) + 1:]
    return where
