"""The lint stage: configs -> plans -> facts -> rules -> findings, with settings and `# seqprof: noqa` applied."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from seqprof.config.loader import MAX_FILE_BYTES
from seqprof.config.plan import Plan
from seqprof.dataset.profile import Profile
from seqprof.errors import SeqprofError
from seqprof.inputs import not_a_regular_file, read_input_text
from seqprof.lint.facts import Facts, GpuFacts, build_facts, gpu_facts
from seqprof.lint.findings import Finding
from seqprof.lint.rules import REQUIREMENTS, Rule, load_rules
from seqprof.settings import LintSettings, find_settings

_KEY_AT = re.compile(r"(?<![\w-])[\"']?([\w.-]+)[\"']?\s*:")
_NOQA = re.compile(r"#\s*seqprof:\s*noqa(?P<codes>(?::?\s*SP\d{3}(?:\s*,?\s*SP\d{3})*)?)", re.IGNORECASE)


@dataclass(frozen=True)
class LintOptions:
    """What the command line asked for; None means 'take it from settings, else the default'."""

    data: str | None = None
    profile: str | None = None
    tokenizer: str | None = None
    dialect: str | None = None
    versions: str | None = None  # pinned framework versions ('trl==0.19.1,transformers==4.57'), else the files
    gpu: str | None = None
    gpu_memory: str | None = None
    world_size: int | None = None
    model_config: str | None = None  # the model's config.json (file or folder) for the memory rules
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    workers: int = 1  # processes counting --data (as analyze --workers)
    gpu_price: float | None = None  # USD per GPU-hour (else settings' gpu-price)
    calibration: str | None = None  # a `seqprof calibrate` file for the GPU (else the shipped one, scaled)
    config_data: bool = True  # without --data/--profile, read the data the config names (seqprof.lint.config_data)


@dataclass(frozen=True)
class FileReport:
    """One config's verdicts: what fired, what was suppressed, which rules could not run and why."""

    path: str
    dialect: str
    findings: tuple[Finding, ...]
    suppressed: int = 0
    skipped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # reason -> rule codes
    settings: LintSettings = field(default_factory=LintSettings)
    notes: tuple[str, ...] = ()  # printed under the findings, never counted as findings
    facts: Facts | None = field(default=None, repr=False, compare=False)  # kept for the HTML report


@dataclass(frozen=True)
class LintResult:
    files: tuple[FileReport, ...]
    rules: tuple[Rule, ...]  # every rule loaded (SARIF lists them)
    data_source: str | None = None
    data_tokenizer: str | None = None  # the tokenizer the data's lengths were counted with
    errors: tuple[str, ...] = ()  # one line per config that could not be linted (SeqprofError text)

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


def lint_inputs(configs: Sequence[str | Path], options: LintOptions) -> list[Path]:
    """Every file a lint run reads: configs, their settings files, the data or profile, the model config."""
    files = [Path(c) for c in configs]
    for config in configs:
        source = find_settings(Path(config).resolve().parent).source
        if source:
            files.append(Path(source))
    for given in (options.profile, options.model_config, options.tokenizer):
        if given:
            files.append(Path(given))
    if options.data:
        try:
            from seqprof.dataset.reader import resolve_source

            files += list(resolve_source(options.data).files)
        except SeqprofError:
            files.append(Path(options.data))
    elif options.config_data and options.profile is None:
        from seqprof.lint.config_data import config_data_files

        files += config_data_files(configs, dialect=options.dialect)
    return files


def lint_paths(configs: Sequence[str | Path], options: LintOptions = LintOptions(), *,
               warn: Callable[[str], None] | None = None) -> LintResult:
    """Lint every config file; the nearest settings file of each config applies to it.

    `warn` receives one-line messages meant for stderr (which tokenizer raw data fell back to).
    """
    if not configs:
        raise SeqprofError("no config files given", fix="seqprof lint CONFIG [CONFIG...]")
    if options.data is not None and options.profile is not None:
        raise SeqprofError("give --data or --profile, not both")
    from seqprof.config.read import read_plan

    profiles: dict[str | None, Profile | None] = {}
    rule_sets: dict[tuple[str, ...], tuple[Rule, ...]] = {}
    reports = []
    all_rules: dict[str, Rule] = {}
    data_source = data_tokenizer = None
    found_settings: dict[Path, LintSettings] = {}
    raw_data = _is_raw_data(options.data, options.profile)
    errors: list[str] = []
    failed_profiles: dict[str | None, SeqprofError] = {}

    def lint_one(config: str | Path) -> FileReport:
        nonlocal data_source, data_tokenizer
        path = Path(config)
        problem = not_a_regular_file(path)
        if problem or not path.is_file():
            raise SeqprofError(f"config {problem}" if problem else "config file not found", path=str(config),
                               fix="pass a config file" if problem else "check the path")
        folder = path.resolve().parent
        if folder not in found_settings:
            found_settings[folder] = find_settings(folder)
        settings = found_settings[folder].with_overrides(
            select=options.select or None, ignore=options.ignore, gpu=options.gpu, gpu_memory=options.gpu_memory,
            tokenizer=options.tokenizer, fail_on=options.fail_on, gpu_price=options.gpu_price)
        rules = rule_sets.get(settings.rule_dirs)
        if rules is None:
            rules = rule_sets[settings.rule_dirs] = load_rules(settings.rule_dirs)
        all_rules.update({r.code: r for r in rules})
        plan = read_plan(str(config), dialect=options.dialect, versions=options.versions)
        tokenizer = settings.tokenizer
        named = None  # the data the config itself names, when neither --data nor --profile is given
        if options.config_data and options.data is None and options.profile is None:
            from seqprof.lint.config_data import find_config_data

            named = find_config_data(plan)
        if (raw_data or (named and named.found)) and tokenizer is None:
            tokenizer = data_tokenizer_for(plan, warn)
        if named and named.datasets:  # one line per dataset on warn; what cannot be read is skipped, never fatal
            from seqprof.lint.config_data import profile_config_data

            profile = profile_config_data(named, tokenizer, workers=options.workers, warn=warn)
        else:
            if tokenizer in failed_profiles:  # the same data failed for an earlier config: do not re-read it
                raise failed_profiles[tokenizer]
            if tokenizer not in profiles:
                try:
                    profiles[tokenizer] = load_lint_profile(options.data, options.profile, tokenizer,
                                                              workers=options.workers)
                except SeqprofError as exc:
                    failed_profiles[tokenizer] = exc
                    raise
            profile = profiles[tokenizer]
        notes: tuple[str, ...] = ()
        if profile is not None:
            data_source = profile.dataset.path
            data_tokenizer = profile.tokenizer.name
            if not raw_data and not named:
                notes = tokenizer_family_notes(profile.tokenizer.name, plan.get("model"))
        gpu = gpu_facts(settings.gpu, settings.gpu_memory)
        needs_sim = any(r.uses("sim") for r in rules if settings.is_enabled(r.code))
        needs_memory = any(r.category == "memory" for r in rules if settings.is_enabled(r.code))
        registry = None
        if plan.dialect == "llamafactory":  # its dataset names are checked with or without --data
            from seqprof.lint.config_data import dataset_registry

            registry = named.registry if named is not None else dataset_registry(plan)
        facts = build_facts(plan, profile, gpu=gpu, world_size=options.world_size, simulate=needs_sim,
                            model_config=options.model_config, estimate_memory=needs_memory,
                            gpu_price=settings.gpu_price, calibration=options.calibration, registry=registry)
        report = lint_plan(plan, facts, rules, settings, text=_read_text(path))
        if plan.dialect == "unknown":
            from seqprof.config.dialects.own_schema import (built_from_the_mapping, hand_mapped, hydra_config,
                                                            mapped_by_keyword, own_sections, read_as_a_dict,
                                                            unread_dump)
            from seqprof.config.project_calls import hydra_group_spread

            from seqprof.config.dialects import ms_swift_keys, peft_adapter_keys

            swift, adapter = ms_swift_keys(plan.raw), peft_adapter_keys(plan.raw)
            other_tool = swift or adapter  # a file another tool reads: no project reading to look for
            own, sections = ([], []) if other_tool else (hand_mapped(plan.raw), own_sections(plan.raw))
            reads = read_as_a_dict(str(path), plan.raw) if not (own or sections or other_tool) else {}
            handed = mapped_by_keyword(str(path), plan.raw) if not (own or sections or reads) else {}
            built = built_from_the_mapping(str(path), plan.raw) if not (own or sections or reads or handed) else ""
            hydra = hydra_config(str(path)) if not (own or sections or reads) else None
            dump = unread_dump(str(path), plan.raw) if not (own or sections or reads or hydra or other_tool) else ""
            if adapter:
                notes += (f"{', '.join(adapter)}: a saved PEFT adapter config, which PeftModel.from_pretrained reads "
                          "back; no training framework parses it, so no framework's key checks apply",)
            elif swift:
                notes += (f"{', '.join(swift)}: ms-swift's arguments, which `swift sft` / SwiftSft reads; seqprof does "
                          "not check ms-swift, so no framework's key checks apply",)
            elif dump:
                notes += (f"{dump}; no framework's key checks apply",)
            elif spread := hydra_group_spread(str(path)) if hydra else None:
                notes += (f"the project's Hydra entry point ({hydra}) composes the configs of this folder into its "
                          f"own DictConfig, and its code spreads this group into {spread.cls} ({spread.where()}): "
                          "each key is judged as that class's keyword, not as a file the framework parses",)
            elif hydra:
                notes += (f"the project's Hydra entry point ({hydra}) composes the configs of this folder into its "
                          "own DictConfig, so its code reads this file and no framework's key checks apply",)
            elif own:  # say why no framework was claimed
                notes += (f"{', '.join(own)}: the project's own names for TrainingArguments / ModelConfig fields, "
                          "which HfArgumentParser and TrlParser refuse, so its script maps this file by hand and no "
                          "framework's key checks apply",)
            elif sections:
                notes += (f"{', '.join(sections)}: sections of the project's own schema (no TrainingArguments or TRL "
                          "config field was ever a mapping of that name), so its script reads this file and no "
                          "framework's key checks apply",)
            elif reads:
                shown = ", ".join(f"{k} ({where})" for k, where in list(reads.items())[:3])
                notes += (f"the project's own code reads {len(reads)} of the file's {len(plan.raw)} keys out of the "
                          f"loaded mapping ({shown}{', ...' if len(reads) > 3 else ''}), so its script maps this file "
                          "by hand and no framework's key checks apply",)
            elif handed:
                shown = ", ".join(f"{k} ({where})" for k, where in list(handed.items())[:3])
                notes += (f"the project's code hands {len(handed)} of the file's {len(plan.raw)} keys to the framework "
                          f"by keyword ({shown}{', ...' if len(handed) > 3 else ''}) and spreads no mapping into it, so "
                          "the framework sees those alone and no framework's key checks apply to the rest",)
            elif built:
                notes += (f"the project's own class {built} declares the file's keys and is built from it, so no "
                          "framework's key checks apply",)
        return replace(report, notes=notes) if notes else report

    for config in configs:  # ruff-like: a config that cannot be read is an error line; the others still run
        try:
            reports.append(lint_one(config))
        except SeqprofError as exc:
            if str(exc) not in errors:
                errors.append(str(exc))
    return LintResult(files=tuple(reports), rules=tuple(sorted(all_rules.values(), key=lambda r: r.code)),
                      data_source=data_source, data_tokenizer=data_tokenizer, errors=tuple(errors))


def _is_raw_data(data: str | None, profile: str | None) -> bool:
    """True when --data names a dataset to tokenize (not a saved profile)."""
    from seqprof.dataset.profile import is_profile_file

    return profile is None and data is not None and not is_profile_file(data)


def data_tokenizer_for(plan: Plan, warn: Callable[[str], None] | None = None) -> str | None:
    """The plan's own model when its tokenizer is found offline, else None (the embedded default), said on warn."""
    from seqprof.dataset.tokenizers import DEFAULT_TOKENIZER, load_tokenizer

    model = plan.get("model")
    if not isinstance(model, str) or not model.strip():
        if warn:
            warn(f"seqprof: no --tokenizer given and the config names no model; "
                 f"using the embedded default {DEFAULT_TOKENIZER!r}")
        return None
    try:
        load_tokenizer(model)
    except SeqprofError:
        if warn:
            warn(f"seqprof: no --tokenizer given and {model!r} not found locally; "
                 f"using the embedded default {DEFAULT_TOKENIZER!r}")
        return None
    return model


# Model families told apart by name; a name may match several (a Qwen-distilled DeepSeek), or none.
_FAMILIES = {
    "llama": ("llama",), "qwen": ("qwen", "qwq"), "mistral": ("mistral", "mixtral", "ministral"),
    "gemma": ("gemma",), "phi": ("phi-", "phi_", "phi3", "phi4"), "deepseek": ("deepseek",),
    "glm": ("glm",), "falcon": ("falcon",), "gpt2": ("gpt2", "gpt-2"), "olmo": ("olmo",),
    "smollm": ("smollm",), "granite": ("granite",), "minimax": ("minimax",), "internlm": ("internlm",),
}


def _families(name: str) -> set[str]:
    low = name.lower()
    return {family for family, marks in _FAMILIES.items() if any(m in low for m in marks)}


def tokenizer_family_notes(tokenizer: str, model: Any) -> tuple[str, ...]:
    """A note when a saved profile's tokenizer is plainly of another model family than the config's model."""
    if not isinstance(model, str):
        return ()
    ours, theirs = _families(tokenizer), _families(model)
    if not ours or not theirs or ours & theirs:
        return ()  # same family, or one side unknown: stay silent rather than guess
    note = (f"the profile was tokenized with {tokenizer!r}, but the config trains {model!r}; "
            "lengths may differ (re-run `seqprof analyze` with that model's tokenizer)")
    return (note,)


def load_lint_profile(data: str | None, profile: str | None, tokenizer: str | None, *,
                      workers: int = 1) -> Profile | None:
    """--profile FILE (or a profile given as --data) loads without the tokenizer stack; raw data is analyzed."""
    from seqprof.dataset.profile import is_profile_file

    if data is not None and profile is not None:
        raise SeqprofError("give --data or --profile, not both")
    if profile is not None:
        return Profile.load(profile)
    if data is None:
        return None
    if is_profile_file(data):
        return Profile.load(data)
    return _analyze(data, tokenizer, workers)


def _analyze(data: str, tokenizer: str | None, workers: int = 1) -> Profile:
    """The one call into the analyze pipeline (imports the tokenizer stack, so only for raw data)."""
    from seqprof.dataset.analyze import AnalyzeOptions, build_profile

    return build_profile(data, AnalyzeOptions(tokenizer=tokenizer, workers=workers))


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
        reason = _skip_reason(rule, rule.missing(context), facts) or (
            FRAGMENT_SKIP if plan.fragment and not _judges_keys(rule) else None)
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


# a fragment's settings are overridden and completed by the files merged with it (diwop's base.yml says adapter:
# qlora, the train-gemma4.yml merged over it adapter: lora): only rules on its own keys judge it alone
FRAGMENT_SKIP = "a config fragment: the files merged with it decide its settings; only its keys are checked"


# the diagnostics a key earns alone, whatever the files merged with it set: unknown, moved, repeated
KEY_KINDS = ("unknown_key", "renamed_key", "removed_key", "deprecated_key", "upcoming_deprecation", "premature_key",
             "unread_key", "undeclared_key", "duplicate_key", "repeated_key")


def _judges_keys(rule: Rule) -> bool:
    """The rule reports key diagnostics (for_each over diagnostics of KEY_KINDS), not a reading of settings."""
    return bool(rule.for_each) and "diagnostics" in rule.for_each and \
        any(f"'{kind}'" in rule.for_each for kind in KEY_KINDS)


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
    text = lines[line - 1]
    for match in _KEY_AT.finditer(text):  # one shared pattern first: compiling one per key was 4 s on 10k keys
        if match.group(1) == leaf:
            return match.start() + 1
    match = re.search(r"(?<![\w-])[\"']?" + re.escape(leaf) + r"[\"']?\s*:", text)
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
        return read_input_text(path, what="config", limit=MAX_FILE_BYTES)
    except SeqprofError:
        return None


def exit_code(result: LintResult, fail_on: str | None = None, exit_zero: bool = False) -> int:
    """0 clean, 1 when any finding is at or above the threshold (default: settings, else warning), 2 on errors."""
    from seqprof.severity import severity_rank

    if result.errors:
        return 2
    if exit_zero:
        return 0
    threshold = severity_rank(fail_on or result.fail_on)
    return 1 if any(severity_rank(f.severity) >= threshold for f in result.findings) else 0


__all__ = ["FileReport", "GpuFacts", "LintOptions", "LintResult", "data_tokenizer_for", "exit_code", "lint_paths",
           "lint_plan", "load_lint_profile", "tokenizer_family_notes"]
