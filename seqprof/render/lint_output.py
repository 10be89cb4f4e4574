"""Render lint results for people (text), programs (JSON), code scanning (SARIF 2.1.0) and GitHub annotations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seqprof.lint.findings import Finding
from seqprof.lint.rules import REQUIREMENT_LABELS, REQUIREMENTS, Rule
from seqprof.lint.run import LintResult

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/seqprof/"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def render(result: LintResult, fmt: str) -> str:
    """One of FORMATS; the CLI prints the returned text as is."""
    if fmt == "text":
        return render_text(result)
    if fmt == "json":
        return json.dumps(to_json(result), indent=2)
    if fmt == "sarif":
        return json.dumps(to_sarif(result), indent=2)
    if fmt == "github":
        return render_github(result)
    raise ValueError(f"unknown format {fmt!r}")


# --- text ---------------------------------------------------------------------------------------


def render_text(result: LintResult) -> str:
    """ruff-like `path:line:col: SP101 [severity] message`, the fix under it, a summary, then skipped rules."""
    out = []
    if not result.files:
        return ""  # every config failed: the errors on stderr say it all
    for f in result.findings:
        where = f"{f.file}:{f.line}:{f.column}" if f.line is not None else f.file
        out.append(f"{where}: {f.code} [{f.severity}] {f.message}")
        if f.fix:
            out.append(f"  fix: {f.fix}")
    counts = {sev: sum(1 for f in result.findings if f.severity == sev) for sev in ("error", "warning", "info")}
    n_files = len(result.files)
    undetected = [r for r in result.files if r.dialect == "unknown"]
    if result.findings:
        detail = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in counts.items() if n)
        out.append(f"Found {len(result.findings)} finding{'s' if len(result.findings) != 1 else ''} ({detail}) "
                   f"in {n_files} file{'s' if n_files != 1 else ''}.")
    elif n_files > len(undetected):  # a file whose framework is unknown was barely checked: no "passed" for it
        n_checked = n_files - len(undetected)
        out.append(f"All checks passed ({n_checked} file{'s' if n_checked != 1 else ''}).")
    for report in result.files:
        if report.dialect != "unknown":
            out.append(f"Read {report.path} as {read_as(report)}.")
    for report in undetected:
        out.append(f"No training framework detected in {report.path}: only file-level checks ran (pass --dialect)")
    if result.errors:
        n = len(result.errors)
        out.append(f"{n} config{'s' if n != 1 else ''} could not be linted (errors on stderr).")
    suppressed = sum(r.suppressed for r in result.files)
    if suppressed:
        out.append(f"{suppressed} finding{'s' if suppressed != 1 else ''} suppressed by `# seqprof: noqa`.")
    for report in result.files:
        for note in report.notes:
            out.append(f"Note: {report.path}: {note}")
    by_code = {r.code: r for r in result.rules}
    for reason, codes in result.skipped.items():
        names = ", ".join(f"{c} {by_code[c].slug}" if c in by_code else c for c in codes)
        out.append(f"Skipped ({reason}): {names}")
    return "\n".join(out)


# --- JSON ---------------------------------------------------------------------------------------


def to_json(result: LintResult) -> dict[str, Any]:
    """DESIGN.md contract: findings[{code, severity, message, file, line, key}] (plus fix, rule)."""
    return {
        "findings": [f.to_dict() for f in result.findings],
        "files": [{"path": r.path, "dialect": r.dialect, "dialect_source": _dialect_source(r), **_trainer(r),
                   "versions": _versions(r),
                   "suppressed": r.suppressed, "run": _run(r)} for r in result.files],
        "run": _run(result.files[0]) if len(result.files) == 1 else None,
        "skipped": [{"reason": reason, "codes": list(codes)} for reason, codes in result.skipped.items()],
        "data": result.data_source,
        "data_tokenizer": result.data_tokenizer,
        "errors": list(result.errors),
        "notes": [{"file": r.path, "note": n} for r in result.files for n in r.notes],
    }


def _trainer(report: Any) -> dict[str, Any]:
    """The trainer the dialect read the file for, and why (TRL: inferred from its keys), when it says."""
    setting = report.facts.plan.setting("trainer") if report.facts is not None else None
    if setting is None:
        return {"trainer": None, "trainer_source": None}
    return {"trainer": setting.value, "trainer_source": setting.key or setting.source.removeprefix("default: ")}


def _dialect_source(report: Any) -> str | None:
    """Why the file was read as its dialect: the keys that decided it, the command that runs it, or --dialect."""
    return (report.facts.plan.dialect_source or None) if report.facts is not None else None


def _versions(report: Any) -> dict[str, Any] | None:
    """Per framework, the pinned range and its file:line, or the release assumed without a pin (TRL/hf only)."""
    plan = report.facts.plan if report.facts is not None else None
    return plan.get("framework_versions") if plan is not None else None


def read_as(report: Any) -> str:
    """'TRL (its keys beta, num_generations); trainer grpo (num_generations ...)': what the file was read as, and why."""
    from seqprof.config.dialects import module

    try:
        label = module(report.dialect).LABEL
    except (ImportError, AttributeError):
        label = report.dialect
    source = _dialect_source(report)
    if source:
        label = f"{label} ({source})"
    trainer = _trainer(report)
    if trainer["trainer"] is None:
        return label
    return f"{label}; trainer {trainer['trainer']} ({trainer['trainer_source']})"


def _run(report: Any) -> dict[str, Any] | None:
    """The run's steps, hours and cost on the named GPU (None without a GPU, data or the model's config.json)."""
    time = report.facts.time if report.facts is not None else None
    return time.to_dict() if time is not None else None


# --- SARIF 2.1.0 ------------------------------------------------------------------------------


def to_sarif(result: LintResult) -> dict[str, Any]:
    """A SARIF 2.1.0 log with every loaded rule described, as GitHub code scanning requires."""
    rules = list(result.rules)
    index = {r.code: i for i, r in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "seqprof",
                "version": _version(),
                "informationUri": INFORMATION_URI,
                "rules": [_sarif_rule(r) for r in rules],
            }},
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": not result.errors,
                "toolExecutionNotifications": [{"level": "error", "message": {"text": e}} for e in result.errors],
            }],
            "results": [_sarif_result(f, index) for f in result.findings],
            "properties": {"files": [{"path": r.path, "dialect": r.dialect, "dialect_source": _dialect_source(r),
                                      **_trainer(r)} for r in result.files]},
        }],
    }


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": "".join(part.capitalize() for part in rule.slug.split("-")),
        "shortDescription": {"text": rule.name},
        "fullDescription": {"text": rule.why},
        "help": {"text": rule.how_to_fix, "markdown": f"**Why:** {rule.why}\n\n**How to fix:** {rule.how_to_fix}"},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"tags": [rule.category, rule.slug], "category": rule.category,
                       "requires": list(rule.requires)},
    }


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    message = f.message + (f" Fix: {f.fix}." if f.fix else "")
    location: dict[str, Any] = {"physicalLocation": {
        "artifactLocation": {"uri": _uri(f.file)},
        "region": {"startLine": f.line if f.line is not None else 1, "startColumn": f.column},
    }}
    if f.key:
        location["logicalLocations"] = [{"name": f.key, "kind": "member"}]
    out: dict[str, Any] = {"ruleId": f.code, "level": _SARIF_LEVEL[f.severity], "message": {"text": message},
                           "locations": [location]}
    if f.code in index:
        out["ruleIndex"] = index[f.code]
    return out


def _uri(path: str) -> str:
    """Relative to the working directory (the repository root in CI) with forward slashes; else a file URI."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(Path(os.getcwd()).resolve()).as_posix()
    except ValueError:
        return p.resolve().as_uri()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("seqprof")
    except PackageNotFoundError:
        return "0+unknown"


# --- GitHub workflow commands -------------------------------------------------------------------


def render_github(result: LintResult) -> str:
    """`::warning file=…,line=…,col=…,title=…::message`, escaped as the Actions runner expects."""
    lines = []
    for f in result.findings:
        props = [f"file={_escape_property(f.file)}"]
        if f.line is not None:
            props += [f"line={f.line}", f"col={f.column}"]
        props.append(f"title={_escape_property(f'{f.code} {f.rule}')}")
        text = f.message + (f" Fix: {f.fix}" if f.fix else "")
        lines.append(f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_escape_data(text)}")
    return "\n".join(lines)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# --- rule documentation --------------------------------------------------------------------


def render_rule_list(rules: Sequence[Rule]) -> str:
    """One line a rule: code, severity, category, slug, name, and what it needs beyond the config."""
    width = max((len(r.slug) for r in rules), default=0)
    out = []
    for r in rules:
        labels = list(dict.fromkeys(REQUIREMENT_LABELS[q] for q in r.requires))
        needs = f"  (needs {', '.join(labels)})" if labels else ""
        out.append(f"{r.code}  {r.severity:<7}  {r.category:<10}  {r.slug:<{width}}  {r.name}{needs}")
    return "\n".join(out)


def render_rule_doc(rule: Rule) -> str:
    """`seqprof rules SP101`: the rule's docs and its passing and failing examples."""
    header = f"severity: {rule.severity}   category: {rule.category}"
    if rule.requires:
        header += f"   needs: {', '.join(rule.requires)}"
    out = [f"{rule.code} {rule.slug}: {rule.name}", header]
    if rule.requires:
        out.append("skipped without: " + "; ".join(REQUIREMENTS[r] for r in rule.requires))
    out += ["", "Why it matters:", _indent(rule.why), "", "How to fix:", _indent(rule.how_to_fix)]
    for title, examples in (("Passes", rule.passing), ("Fails", rule.failing)):
        for ex in examples:
            head = f"{title} ({ex.dialect}{', --versions ' + ex.versions if ex.versions else ''}" \
                   f"{', ' + ex.note if ex.note else ''}):"
            out += ["", head, _indent(ex.config.rstrip())]
            for name, text in ex.files.items():
                out += [_indent(f"# {name}:"), _indent(text.rstrip(), "    #   ")]
            if ex.data:
                data = ", ".join(f"{n} x {length}" for length, n in sorted(ex.data.items()))
                out.append(_indent(f"# data lengths (count x tokens): {data}"))
    return "\n".join(out)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    return {"code": rule.code, "slug": rule.slug, "name": rule.name, "severity": rule.severity,
            "category": rule.category, "requires": list(rule.requires), "why": rule.why,
            "how_to_fix": rule.how_to_fix,
            "examples": {"pass": [_example_dict(e) for e in rule.passing],
                         "fail": [_example_dict(e) for e in rule.failing]}}


def _example_dict(ex) -> dict[str, Any]:
    out = {"dialect": ex.dialect, "config": ex.config}
    if ex.data:
        out["data"] = {str(k): v for k, v in sorted(ex.data.items())}
    if ex.note:
        out["note"] = ex.note
    if ex.versions:
        out["versions"] = ex.versions
    if ex.files:
        out["files"] = dict(ex.files)
    return out
