"""Declarative rules: load rules/*.yaml, compile their Jinja2 conditions in a sandbox, evaluate over facts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, read_input_text
from seqprof.severity import SEVERITIES

RULE_FIELDS = ("code", "slug", "name", "severity", "category", "requires", "for_each", "condition", "at",
               "message", "fix", "docs", "examples")
REQUIRED_FIELDS = ("code", "slug", "severity", "category", "condition", "message", "fix", "docs", "examples")
CATEGORIES = ("padding", "truncation", "batching", "run", "config", "memory")
# Facts a rule may require; without them the rule is skipped and the reason is reported.
REQUIREMENTS: Mapping[str, str] = {
    "data": "no data: pass --data DATA or --profile profile.json",
    "sim": "no data: pass --data DATA or --profile profile.json",  # the simulation runs on the data
    "run": "run length unknown: no data and no max_steps",
    "memory": "no memory estimate: the memory model is not available",
    "gpu": "no GPU given: pass --gpu NAME or --gpu-memory 80GB",
}
# What a requirement means to a user, for `seqprof rules`.
REQUIREMENT_LABELS: Mapping[str, str] = {"data": "data", "run": "data or max_steps", "sim": "data",
                                         "memory": "memory model", "gpu": "--gpu"}
_CODE = re.compile(r"^SP\d{3}$")
_DOTTED = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_SLUG = re.compile(r"^[a-z][a-z0-9-]*$")
MAX_RULE_BYTES = 1 * MiB


@dataclass(frozen=True)
class RuleExample:
    """A config snippet the rule must pass or fail on, in a named dialect, with the data it assumes."""

    config: str
    dialect: str
    data: Mapping[str, int] | None = None  # length histogram {length: count}
    recommended: int | None = None  # override the profile's recommended max_seq_length
    gpu: str | None = None
    world_size: int | None = None
    note: str | None = None
    filename: str = "config.yaml"
    model_config: str | None = None  # the model's config.json for memory rules (relative to the rule file)
    versions: str | None = None  # pinned framework versions, as `seqprof lint --versions` ('trl==0.19.1')
    files: Mapping[str, str] = field(default_factory=dict)  # files beside the config, path -> text (a registry)


@dataclass(frozen=True)
class Rule:
    """One rule as written in its YAML file, plus its compiled condition and templates."""

    code: str
    slug: str
    name: str
    severity: str
    category: str
    requires: tuple[str, ...]
    condition: str
    message: str
    fix: str
    why: str
    how_to_fix: str
    at: tuple[str, ...] = ()
    for_each: str | None = None
    passing: tuple[RuleExample, ...] = ()
    failing: tuple[RuleExample, ...] = ()
    source: str = ""
    _compiled: Any = field(default=None, compare=False, repr=False)

    def uses(self, fact: str) -> bool:
        """Whether the rule reads `fact` at all (required, or optional in a template)."""
        pattern = re.compile(rf"\b{re.escape(fact)}\b")
        return fact in self.requires or any(pattern.search(t) for t in (self.condition, self.message, self.fix))

    def missing(self, context: Mapping[str, Any]) -> tuple[str, ...]:
        """The required facts this context lacks (the rule is skipped when any is missing)."""
        return tuple(name for name in self.requires if context.get(name) is None)

    def evaluate(self, context: Mapping[str, Any]) -> list[Hit]:
        """Every place this rule fires in `context` (one per for_each item, or at most one)."""
        compiled = self._compiled
        try:
            items: Iterable[Any] = [None]
            if compiled.for_each is not None:
                items = compiled.for_each(**context) or []
            hits = []
            for item in items:
                scope = dict(context, item=item) if compiled.for_each is not None else context
                if not compiled.condition(**scope):
                    continue
                hits.append(Hit(location=_locate(compiled.at, scope),
                                message=_squash(compiled.template("message").render(scope)),
                                fix=_squash(compiled.template("fix").render(scope)) or None))
            return hits
        except SeqprofError:
            raise
        except Exception as exc:  # a broken rule is the rule author's error, said with the rule's file
            raise SeqprofError(f"rule {self.code} ({self.slug}) failed: {type(exc).__name__}: {exc}",
                               path=self.source, fix="fix the rule's condition or templates") from None


@dataclass(frozen=True)
class Hit:
    """One firing of a rule before settings and noqa: where, what, and the fix."""

    location: Any  # Setting / ConfigDiagnostic / Loc (has key, file, line) or None for the whole file
    message: str
    fix: str | None


@dataclass(frozen=True)
class _Compiled:
    """Conditions are compiled at load; a message or fix template is compiled when the rule first fires,
    since most rules never fire on a given config (extra rule dirs are still syntax-checked at load)."""

    env: Any
    condition: Any
    at: tuple[tuple[str, ...], ...]  # dotted fact names, resolved by attribute lookup
    for_each: Any
    sources: Mapping[str, str]  # "message" / "fix" -> template source
    templates: dict[str, Any] = field(default_factory=dict)  # compiled on first use

    def template(self, name: str) -> Any:
        if name not in self.templates:
            self.templates[name] = self.env.from_string(self.sources[name])
        return self.templates[name]


def _squash(text: str) -> str:
    """Templates are written folded over lines; a message is one line of single spaces."""
    return " ".join(text.split())


def _resolve(path: tuple[str, ...], scope: Mapping[str, Any]) -> Any:
    """A dotted name (`setting.max_seq_length`, `item`) looked up in the facts; None where a part is missing."""
    value = scope.get(path[0])
    for part in path[1:]:
        if value is None:
            return None
        value = value[part] if isinstance(value, Mapping) else getattr(value, part, None)
    return value


def _locate(at: Sequence[tuple[str, ...]], scope: Mapping[str, Any]) -> Any:
    """The first `at` name that yields something with a line; else the first with a key; else None."""
    fallback = None
    for path in at:
        value = _resolve(path, scope)
        if value is None or not hasattr(value, "line"):
            continue
        if value.line is not None:
            return value
        fallback = fallback or value
    return fallback


def _environment():
    """A sandboxed Jinja2 environment: rules can read facts and format numbers, never run code."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False, trim_blocks=True,
                                        lstrip_blocks=True)
    env.filters.update(pct=_pct, num=_num, times=_times, plural=_plural, duration=_duration)
    return env


def _pct(value: float, digits: int = 1) -> str:
    return f"{value * 100:.{digits}f}%"


def _num(value: float, digits: int = 0) -> str:
    """Thousands separators; integers stay integers."""
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    return f"{round(value):,}"


def _duration(seconds: float) -> str:
    from seqprof.predict.runtime import format_duration

    return format_duration(seconds)


def _times(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f}x"


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (plural or word + 's')}"


# --- loading -----------------------------------------------------------------------------------


def builtin_rules_dir() -> Path:
    """rules/ inside the installed wheel (seqprof/rules), else the source checkout's rules/."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "rules"
    return packaged if packaged.is_dir() else package.parent / "rules"


def load_rules(extra_dirs: Iterable[str | Path] = (), *, include_builtin: bool = True) -> tuple[Rule, ...]:
    """The built-in pack plus extra rule directories, sorted by code; duplicate codes are errors."""
    builtin = builtin_rules_dir()
    dirs = ([builtin] if include_builtin else []) + [Path(d) for d in extra_dirs]
    rules: dict[str, Rule] = {}
    env = _environment()
    for directory in dirs:
        if not directory.is_dir():
            raise SeqprofError("rule directory not found", path=str(directory),
                               fix="check rule-dirs in [tool.seqprof] / .seqprof.yaml")
        for path in sorted(directory.glob("*.y*ml")):
            rule = load_rule_file(path, env=env, validate=directory != builtin)
            if rule.code in rules:
                raise SeqprofError(f"rule code {rule.code} is already defined in {rules[rule.code].source}",
                                   path=str(path), fix="give the rule a code of its own")
            rules[rule.code] = rule
    return tuple(sorted(rules.values(), key=lambda r: r.code))


def load_rule_file(path: str | Path, *, env: Any = None, validate: bool = True) -> Rule:
    """Parse and compile one rule file; any mistake is a SeqprofError naming the file and line.

    `validate=False` leaves the message/fix templates unparsed until the rule fires (the built-in
    pack, whose templates the rule tests render)."""
    p = Path(path)
    raw = _load_yaml(p)
    if not isinstance(raw, dict):
        raise SeqprofError("a rule file is one mapping (code, slug, severity, ...)", path=str(p), line=1)
    unknown = sorted(set(raw) - set(RULE_FIELDS))
    missing = [f for f in REQUIRED_FIELDS if f not in raw]
    if unknown or missing:
        problem = "; ".join(filter(None, [f"unknown field(s) {', '.join(unknown)}" if unknown else "",
                                          f"missing field(s) {', '.join(missing)}" if missing else ""]))
        raise SeqprofError(f"rule file: {problem}", path=str(p), fix=f"fields: {', '.join(RULE_FIELDS)}")
    code, slug, severity, category = (str(raw[k]) for k in ("code", "slug", "severity", "category"))
    if not _CODE.match(code):
        raise SeqprofError(f"rule code {code!r} must look like SP101", path=str(p))
    if not _SLUG.match(slug):
        raise SeqprofError(f"rule slug {slug!r} must be lower-case-with-dashes", path=str(p))
    if severity not in SEVERITIES:
        raise SeqprofError(f"severity must be one of {', '.join(SEVERITIES)}", path=str(p))
    if category not in CATEGORIES:
        raise SeqprofError(f"category must be one of {', '.join(CATEGORIES)}", path=str(p))
    requires = tuple(raw.get("requires") or ())
    bad = [r for r in requires if r not in REQUIREMENTS]
    if bad:
        raise SeqprofError(f"unknown requirement(s) {', '.join(bad)}", path=str(p),
                           fix=f"known: {', '.join(REQUIREMENTS)}")
    docs = raw["docs"] if isinstance(raw["docs"], dict) else {}
    if not docs.get("why") or not docs.get("how_to_fix"):
        raise SeqprofError("docs needs `why` and `how_to_fix`", path=str(p))
    examples = raw["examples"] if isinstance(raw["examples"], dict) else {}
    passing = tuple(_example(e, p) for e in examples.get("pass") or ())
    failing = tuple(_example(e, p) for e in examples.get("fail") or ())
    if not passing or not failing:
        raise SeqprofError("a rule needs at least one passing and one failing example", path=str(p))
    at = raw.get("at") or ()
    at = (at,) if isinstance(at, str) else tuple(str(a) for a in at)
    bad_at = [a for a in at if not _DOTTED.match(a)]
    if bad_at:
        raise SeqprofError(f"`at` takes dotted fact names (setting.max_seq_length, item), not {bad_at[0]!r}",
                           path=str(p))
    rule = Rule(code=code, slug=slug, name=str(raw.get("name") or slug.replace("-", " ")), severity=severity,
                category=category, requires=requires, condition=str(raw["condition"]).strip(),
                message=str(raw["message"]), fix=str(raw["fix"]), why=str(docs["why"]).strip(),
                how_to_fix=str(docs["how_to_fix"]).strip(), at=at,
                for_each=str(raw["for_each"]).strip() if raw.get("for_each") else None,
                passing=passing, failing=failing, source=str(p))
    return _compile(rule, env if env is not None else _environment(), validate)


def _load_yaml(path: Path) -> Any:
    """Safe YAML load: libyaml through PyYAML when it is there (~10x faster), else ruamel.yaml."""
    text = read_input_text(path, what="rule file", limit=MAX_RULE_BYTES)
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None and getattr(yaml, "__with_libyaml__", False):
        try:
            return yaml.load(text, Loader=yaml.CSafeLoader)
        except yaml.YAMLError as exc:
            _yaml_error(exc, path)
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        _yaml_error(exc, path)


def _yaml_error(exc: Exception, path: Path) -> None:
    mark = getattr(exc, "problem_mark", None)
    raise SeqprofError(f"rule file is not valid YAML ({getattr(exc, 'problem', exc)})", path=str(path),
                       line=mark.line + 1 if mark is not None else None) from None


def _example(raw: Any, path: Path) -> RuleExample:
    if not isinstance(raw, dict) or "config" not in raw or "dialect" not in raw:
        raise SeqprofError("each example needs `config` (a snippet) and `dialect`", path=str(path))
    data = raw.get("data")
    if data is not None:
        data = {int(k): int(v) for k, v in data.items()}
    return RuleExample(config=str(raw["config"]), dialect=str(raw["dialect"]), data=data,
                       recommended=raw.get("recommended"), gpu=raw.get("gpu"), world_size=raw.get("world_size"),
                       note=raw.get("note"), filename=str(raw.get("filename", "config.yaml")),
                       model_config=str(path.parent / raw["model_config"]) if raw.get("model_config") else None,
                       versions=str(raw["versions"]) if raw.get("versions") else None,
                       files=_example_files(raw.get("files"), path))


def _example_files(raw: Any, path: Path) -> dict[str, str]:
    """An example's files beside its config (`data/dataset_info.json: |` text), as relative paths below it."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise SeqprofError("an example's `files` maps relative paths to their text", path=str(path))
    if any(Path(k).is_absolute() or ".." in Path(k).parts for k in raw):
        raise SeqprofError("an example's `files` are relative paths below the config", path=str(path))
    return dict(raw)


def _compile(rule: Rule, env: Any, validate: bool) -> Rule:
    from jinja2 import TemplateSyntaxError

    try:
        compiled = _Compiled(
            env=env,
            condition=env.compile_expression(rule.condition),
            at=tuple(tuple(a.split(".")) for a in rule.at),
            for_each=env.compile_expression(rule.for_each) if rule.for_each else None,
            sources={"message": rule.message, "fix": rule.fix},
        )
        if validate:
            env.parse(rule.message)
            env.parse(rule.fix)
    except TemplateSyntaxError as exc:
        raise SeqprofError(f"rule {rule.code}: Jinja2 syntax error ({exc.message})", path=rule.source,
                           fix="conditions are Jinja2 expressions, messages Jinja2 templates") from None
    return replace(rule, _compiled=compiled)


def find_rule(rules: Sequence[Rule], code_or_slug: str) -> Rule:
    """A rule by code (SP101) or slug (fixed-padding-waste); unknown ones get a did-you-mean."""
    import difflib

    wanted = code_or_slug.strip()
    for rule in rules:
        if wanted.upper() == rule.code or wanted.lower() == rule.slug:
            return rule
    names = [r.code for r in rules] + [r.slug for r in rules]
    close = difflib.get_close_matches(wanted, names, n=1)
    raise SeqprofError(f"no rule {wanted!r}", fix=f"did you mean {close[0]}?" if close else "see `seqprof rules`")
