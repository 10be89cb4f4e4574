"""The lint stage: configs -> plans -> facts -> rules -> findings, with settings and `# seqprof: noqa` applied."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SeqprofError
from .facts import Facts, GpuFacts, build_facts, gpu_facts
from .findings import Finding
from .plan import Plan
from .profile import Profile
from .rule_engine import REQUIREMENTS, Rule, load_rules
from .settings import LintSettings, find_settings

_NOQA = re.compile(r"#\s*seqprof:\s*noqa(?P<codes>(?::?\s*SP\d{3}(?:\s*,?\s*SP\d{3})*)?)", re.IGNORECASE)


@dataclass(frozen=True)
class LintOptions:
    """What the command line asked for; None means 'take it from settings, else the default'."""

    data: str | None = None
    profile: str | None = None
    tokenizer: str | None = None
    dialect: str | None = None
    gpu: str | None = None
    gpu_memory: str | None = None
    world_size: int | None = None
    model_config: str | None = None  # the model's config.json (file or folder) for the memory rules
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None


@dataclass(frozen=True)
class FileReport:
    """One config's verdicts: what fired, what was suppressed, which rules could not run and why."""

    path: str
    dialect: str
    findings: tuple[Finding, ...]
    suppressed: int = 0
    skipped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # reason -> rule codes
    settings: LintSettings = field(default_factory=LintSettings)
    facts: Facts | None = field(default=None, repr=False, compare=False)  # kept for the HTML report


@dataclass(frozen=True)
class LintResult:
    files: tuple[FileReport, ...]
    rules: tuple[Rule, ...]  # every rule loaded (SARIF lists them)
    data_source: str | None = None

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for report in self.files for f in report.findings)

    @property
    def skipped(self) -> dict[str, tuple[str, ...]]:
        """Reason -> codes skipped for it in any file."""
        out: dict[str, list[str]] = {}
        for report in self.files:
            for reason, codes in report.skipped.items():
                bucket = out.setdefault(reason, [])
                bucket.extend(c for c in codes if c not in bucket)
        return {reason: tuple(codes) for reason, codes in out.items()}

    @property
    def fail_on(self) -> str:
        """The threshold a settings file pinned (first file's), else warning."""
        for report in self.files:
            if report.settings.fail_on:
                return report.settings.fail_on
        return "warning"


def lint_paths(configs: Sequence[str | Path], options: LintOptions = LintOptions()) -> LintResult:
    """Lint every config file; the nearest settings file of each config applies to it."""
    if not configs:
        raise SeqprofError("no config files given", fix="seqprof lint CONFIG [CONFIG...]")
    from .config_plan import read_plan

    profiles: dict[str | None, Profile | None] = {}
    rule_sets: dict[tuple[str, ...], tuple[Rule, ...]] = {}
    reports = []
    all_rules: dict[str, Rule] = {}
    data_source = None
    found_settings: dict[Path, LintSettings] = {}
    for config in configs:
        path = Path(config)
        if not path.is_file():
            raise SeqprofError("config file not found", path=str(config), fix="check the path")
        folder = path.resolve().parent
        if folder not in found_settings:
            found_settings[folder] = find_settings(folder)
        settings = found_settings[folder].with_overrides(
            select=options.select or None, ignore=options.ignore, gpu=options.gpu, gpu_memory=options.gpu_memory,
            tokenizer=options.tokenizer, fail_on=options.fail_on)
        rules = rule_sets.get(settings.rule_dirs)
        if rules is None:
            rules = rule_sets[settings.rule_dirs] = load_rules(settings.rule_dirs)
        all_rules.update({r.code: r for r in rules})
        if settings.tokenizer not in profiles:
            profiles[settings.tokenizer] = load_lint_profile(options.data, options.profile, settings.tokenizer)
        profile = profiles[settings.tokenizer]
        if profile is not None:
            data_source = profile.dataset.path
        plan = read_plan(str(config), dialect=options.dialect)
        gpu = gpu_facts(settings.gpu, settings.gpu_memory)
        needs_sim = any(r.uses("sim") for r in rules if settings.is_enabled(r.code))
        needs_memory = any(r.category == "memory" for r in rules if settings.is_enabled(r.code))
        facts = build_facts(plan, profile, gpu=gpu, world_size=options.world_size, simulate=needs_sim,
                            model_config=options.model_config, estimate_memory=needs_memory)
        reports.append(lint_plan(plan, facts, rules, settings, text=_read_text(path)))
    return LintResult(files=tuple(reports), rules=tuple(sorted(all_rules.values(), key=lambda r: r.code)),
                      data_source=data_source)


def load_lint_profile(data: str | None, profile: str | None, tokenizer: str | None) -> Profile | None:
    """--profile FILE (or a profile given as --data) loads without the tokenizer stack; raw data is analyzed."""
    from .profile import is_profile_file

    if data is not None and profile is not None:
        raise SeqprofError("give --data or --profile, not both")
    if profile is not None:
        return Profile.load(profile)
    if data is None:
        return None
    if is_profile_file(data):
        return Profile.load(data)
    return _analyze(data, tokenizer)


def _analyze(data: str, tokenizer: str | None) -> Profile:
    """The one call into the analyze pipeline (imports the tokenizer stack, so only for raw data)."""
    from .analyze import AnalyzeOptions, build_profile

    return build_profile(data, AnalyzeOptions(tokenizer=tokenizer))


def lint_plan(plan: Plan, facts: Facts, rules: Sequence[Rule], settings: LintSettings | None = None,
              *, text: str | None = None) -> FileReport:
    """Run every enabled rule over one plan's facts; apply severity overrides and noqa comments."""
    settings = settings if settings is not None else LintSettings()
    context = facts.context()
    lines = text.splitlines() if text is not None else []
    findings: list[Finding] = []
    skipped: dict[str, list[str]] = {}
    suppressed = 0
    for rule in rules:
        if not settings.is_enabled(rule.code):
            continue
        reason = _skip_reason(rule, rule.missing(context), facts)
        if reason:
            skipped.setdefault(reason, []).append(rule.code)
            continue
        for hit in rule.evaluate(context):
            finding = _finding(rule, hit, plan, settings, lines)
            if _suppressed(finding, lines):
                suppressed += 1
                continue
            findings.append(finding)
    unique = sorted(set(findings), key=Finding.sort_key)
    return FileReport(path=plan.path, dialect=plan.dialect, findings=tuple(unique), suppressed=suppressed,
                      skipped={reason: tuple(codes) for reason, codes in skipped.items()}, settings=settings,
                      facts=facts)


def _skip_reason(rule: Rule, missing: Sequence[str], facts: Facts) -> str | None:
    """Why a rule cannot run here: no model architecture found (every memory rule), else its first missing fact."""
    if rule.category == "memory" and facts.memory_reason and facts.architecture is None:
        return facts.memory_reason
    if not missing:
        return None
    if missing[0] == "memory" and facts.memory_reason:
        return facts.memory_reason
    return REQUIREMENTS[missing[0]]


def _finding(rule: Rule, hit: Any, plan: Plan, settings: LintSettings, lines: Sequence[str]) -> Finding:
    where = hit.location
    file = getattr(where, "file", None) or plan.path
    line = getattr(where, "line", None)
    key = getattr(where, "key", None)
    if file != plan.path:  # a finding inside a referenced file (a DeepSpeed JSON) keeps its own place
        column = 1
    else:
        column = _column(lines, line, key)
    return Finding(code=rule.code, severity=settings.severity_for(rule.code, rule.severity), message=hit.message,
                   file=file, line=line, key=key, fix=hit.fix, rule=rule.slug, column=column)


def _column(lines: Sequence[str], line: int | None, key: str | None) -> int:
    """1-based column of the key's last segment on its line (1 when it cannot be found)."""
    if line is None or key is None or not (1 <= line <= len(lines)):
        return 1
    leaf = key.split(".")[-1]
    match = re.search(r"(?<![\w-])[\"']?" + re.escape(leaf) + r"[\"']?\s*:", lines[line - 1])
    return match.start() + 1 if match else 1


def _suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    """`# seqprof: noqa` silences every rule on that line; `# seqprof: noqa SP101[, SP102]` only those."""
    if finding.line is None or not (1 <= finding.line <= len(lines)):
        return False
    match = _NOQA.search(lines[finding.line - 1])
    if match is None:
        return False
    codes = re.findall(r"SP\d{3}", match.group("codes").upper())
    return not codes or finding.code in codes


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def exit_code(result: LintResult, fail_on: str | None = None, exit_zero: bool = False) -> int:
    """0 clean, 1 when any finding is at or above the threshold (default: settings, else warning)."""
    from .findings import severity_rank

    if exit_zero:
        return 0
    threshold = severity_rank(fail_on or result.fail_on)
    return 1 if any(severity_rank(f.severity) >= threshold for f in result.findings) else 0


__all__ = ["FileReport", "GpuFacts", "LintOptions", "LintResult", "exit_code", "lint_paths", "lint_plan",
           "load_lint_profile"]
