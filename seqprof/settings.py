"""Lint settings from `[tool.seqprof]` in pyproject.toml or `.seqprof.yaml`, found like ruff finds its own."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from seqprof.errors import SeqprofError
from seqprof.inputs import read_input_text
from seqprof.severity import SEVERITIES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

YAML_NAMES = (".seqprof.yaml", ".seqprof.yml")
KNOWN_KEYS = ("select", "ignore", "severity", "gpu", "gpu-memory", "gpu-price", "tokenizer", "rule-dirs", "fail-on")
_CODE_PREFIX = re.compile(r"^(ALL|SP\d{0,3})$")


@dataclass(frozen=True)
class LintSettings:
    """Which rules run, how severe they are, and the defaults a project pins for `seqprof lint`."""

    select: tuple[str, ...] = ()  # code prefixes; empty means every rule
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)  # code -> info|warning|error
    gpu: str | None = None
    gpu_memory: str | None = None
    tokenizer: str | None = None
    rule_dirs: tuple[str, ...] = ()  # absolute paths
    fail_on: str | None = None
    gpu_price: float | None = None  # USD per GPU-hour, for the run's cost
    source: str | None = None  # the file these came from, None for built-in defaults

    def is_enabled(self, code: str) -> bool:
        """ruff semantics: the longest matching prefix among select/ignore decides; ALL matches all."""
        best_select = _longest_match(code, self.select) if self.select else 0
        if self.select and best_select < 0:
            return False
        best_ignore = _longest_match(code, self.ignore)
        return best_ignore < 0 or best_select > best_ignore

    def severity_for(self, code: str, default: str) -> str:
        return self.severity.get(code, default)

    def with_overrides(self, *, select: Iterable[str] | None = None, ignore: Iterable[str] = (),
                       gpu: str | None = None, gpu_memory: str | None = None,
                       tokenizer: str | None = None, fail_on: str | None = None,
                       gpu_price: float | None = None) -> LintSettings:
        """Command-line values win: --select replaces the file's list, --ignore adds to it."""
        changes: dict[str, Any] = {}
        if select:
            changes["select"] = tuple(_check_codes(list(select), "--select", None, None))
        if ignore:
            changes["ignore"] = self.ignore + tuple(_check_codes(list(ignore), "--ignore", None, None))
        for name, value in (("gpu", gpu), ("gpu_memory", gpu_memory), ("tokenizer", tokenizer),
                            ("fail_on", fail_on), ("gpu_price", gpu_price)):
            if value is not None:
                changes[name] = value
        if gpu is not None and gpu_memory is None:
            changes["gpu_memory"] = None
        if gpu_memory is not None and gpu is None:
            changes["gpu"] = None
        return replace(self, **changes)


def _longest_match(code: str, prefixes: Iterable[str]) -> int:
    """Length of the longest prefix matching `code` (ALL counts as 0), or -1 if none matches."""
    best = -1
    for prefix in prefixes:
        if prefix == "ALL":
            best = max(best, 0)
        elif code.startswith(prefix):
            best = max(best, len(prefix))
    return best


def find_settings(start: str | Path) -> LintSettings:
    """Walk up from `start` (a config file or directory); the nearest settings file wins."""
    here = Path(start).resolve()
    directory = here if here.is_dir() else here.parent
    for folder in (directory, *directory.parents):
        for name in YAML_NAMES:
            candidate = folder / name
            if candidate.is_file():
                return load_settings_file(candidate)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _names_seqprof(pyproject):
            found = _load_pyproject(pyproject)
            if found is not None:
                return found
    return LintSettings()


def _names_seqprof(pyproject: Path) -> bool:
    """Whether a pyproject.toml found on the way up could hold [tool.seqprof]: one that never names seqprof is the
    project's own, and a syntax error in it is pip's business, not a reason to refuse linting the config beside it."""
    try:
        return b"seqprof" in pyproject.read_bytes()
    except OSError:
        return False


def load_settings_file(path: str | Path) -> LintSettings:
    """Read one `.seqprof.yaml` or pyproject.toml (`[tool.seqprof]`); bad values are errors with a fix."""
    p = Path(path)
    if p.name == "pyproject.toml":
        found = _load_pyproject(p)
        return found if found is not None else LintSettings(source=str(p))
    return _load_yaml(p)


MAX_SETTINGS_BYTES = 1024 * 1024  # a settings file is a few lines; a larger one is not one


def _read_settings_text(path: Path) -> str:
    """The file's text, bounded in size and decoded as UTF-8, or one error line."""
    return read_input_text(path, what="settings file", limit=MAX_SETTINGS_BYTES)


def _load_pyproject(path: Path) -> LintSettings | None:
    text = _read_settings_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SeqprofError(f"pyproject.toml is not valid TOML ({exc})", path=str(path)) from None
    section = data.get("tool", {}).get("seqprof")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise SeqprofError("[tool.seqprof] must be a table", path=str(path), line=_toml_line(text, "seqprof"))
    return _from_mapping(section, path, lambda key: _toml_line(text, key))


def _toml_line(text: str, key: str) -> int | None:
    """Line of `key = ...` (or the [tool.seqprof] header): TOML parsers keep no positions."""
    pattern = re.compile(rf"^\s*(\[tool\.{re.escape(key)}\]|[\"']?{re.escape(key)}[\"']?\s*=)", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _load_yaml(path: Path) -> LintSettings:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    text = _read_settings_text(path)
    from seqprof.config.loader import parse_config

    try:
        parse_config(text, str(path))  # the configs' alias guard first: a billion-laughs file is one error line
    except SeqprofError as exc:
        if "alias" in exc.message:
            raise
        # anything else is said below, in the settings' own words
    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SeqprofError(f"settings file is not valid YAML ({getattr(exc, 'problem', exc)})", path=str(path),
                           line=mark.line + 1 if mark is not None else None) from None
    if data is None:
        return LintSettings(source=str(path))
    if not isinstance(data, dict):
        raise SeqprofError("settings file must be a mapping of setting: value", path=str(path), line=1,
                           fix="e.g. `ignore: [SP301]`")

    def line_of(key: str) -> int | None:
        try:
            return data.lc.key(key)[0] + 1
        except (AttributeError, KeyError, TypeError):
            return None

    return _from_mapping(dict(data), path, line_of)


def _from_mapping(raw: Mapping[str, Any], path: Path, line_of) -> LintSettings:
    values: dict[str, Any] = {"source": str(path)}
    for original_key, value in raw.items():
        key = str(original_key).replace("_", "-")
        line = line_of(original_key)
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            raise SeqprofError(f"unknown seqprof setting '{original_key}'", path=str(path), line=line,
                               fix=f"did you mean '{close[0]}'?" if close else f"known: {', '.join(KNOWN_KEYS)}")
        if key in ("select", "ignore"):
            values[key] = tuple(_check_codes(value, key, path, line))
        elif key == "severity":
            if not isinstance(value, Mapping):
                raise SeqprofError("severity must map rule codes to info|warning|error", path=str(path),
                                   line=line, fix="e.g. severity = { SP301 = \"error\" }")
            overrides = {}
            for code, sev in value.items():
                _check_codes([code], "severity", path, line)
                if sev not in SEVERITIES:
                    raise SeqprofError(f"severity of {code} must be one of {', '.join(SEVERITIES)}, not {sev!r}",
                                       path=str(path), line=line)
                overrides[str(code).upper()] = str(sev)
            values["severity"] = overrides
        elif key == "rule-dirs":
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise SeqprofError("rule-dirs must be a list of directories", path=str(path), line=line)
            values["rule_dirs"] = tuple(str((path.parent / v).resolve()) for v in items)
        elif key == "gpu-price":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e6:
                raise SeqprofError("gpu-price must be a positive number (USD per GPU-hour)", path=str(path),
                                   line=line, fix="e.g. gpu-price = 3.5")
            values["gpu_price"] = float(value)
        elif key == "fail-on":
            if value not in SEVERITIES:
                raise SeqprofError(f"fail-on must be one of {', '.join(SEVERITIES)}", path=str(path), line=line)
            values["fail_on"] = value
        else:
            if value is not None and not isinstance(value, (str, int)):
                raise SeqprofError(f"{original_key} must be a string", path=str(path), line=line)
            values[key.replace("-", "_")] = None if value is None else str(value)
    return LintSettings(**values)


def _check_codes(value: Any, what: str, path: Path | None, line: int | None) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise SeqprofError(f"{what} must be a list of rule codes", path=None if path is None else str(path), line=line)
    codes = []
    for item in items:
        for code in str(item).split(","):
            code = code.strip().upper()
            if not code:
                continue
            if not _CODE_PREFIX.match(code):
                raise SeqprofError(f"{what}: '{item}' is not a rule code or prefix",
                                   path=None if path is None else str(path), line=line,
                                   fix="use codes like SP101, prefixes like SP1, or ALL")
            codes.append(code)
    return codes
