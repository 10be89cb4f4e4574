"""Read a YAML or JSON training config safely, keeping the line of every key.

Why not ``yaml.safe_load``: a linter must point at lines, report duplicate keys instead of
silently keeping the last one, and refuse a "billion laughs" file in microseconds. So the
file is only *composed* into a node graph with marks (by libyaml's C composer through PyYAML
when it is there, else ruamel.yaml's pure-Python one; both use YAML 1.1 resolution) and this
module builds plain Python values from the nodes itself:

- tags never construct objects: the tags ``yaml.safe_load`` builds are honoured; any other tag
  (``!!python/object:...``, ``!Ref``) is a SeqprofError at its line, since the frameworks'
  ``yaml.safe_load`` refuses it and the run would not start;
- aliases are expanded, but the expanded size is computed first over the node graph
  (linear time) and a file that would expand past ``MAX_EXPANDED_NODES`` is a SeqprofError;
- a duplicate key is a ``ConfigDiagnostic(kind="duplicate_key")`` naming both lines, and
  the last value wins (what PyYAML, and so axolotl/TRL/LLaMA-Factory, do);
- scalars resolve with YAML 1.1 rules (``yes``/``on`` are booleans, ``017`` is octal), the
  rules of PyYAML that these frameworks load their configs with; ``1e-4`` is a float (PyYAML
  keeps it a string, which argparse, OmegaConf and axolotl's schema coerce; the keys are kept in
  ``text_numbers`` for the loaders that hand it on as text);
- a top level that is not a mapping is a SeqprofError.

JSON files are read with ``json`` (what DeepSpeed and model configs are loaded with, so a file
JSON rejects is an error even where YAML would accept it) and composed as YAML for their
lines; linked JSON configs (DeepSpeed, drafter model configs) are found with
``resolve_linked_file``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from seqprof.config.plan import ConfigDiagnostic
from seqprof.errors import SeqprofError
from seqprof.inputs import read_input_text

MAX_EXPANDED_NODES = 200_000  # a real config has a few hundred; a billion-laughs file, 10**9
MAX_FILE_BYTES = 16 * 1024 * 1024

_TAG = "tag:yaml.org,2002:"
# The tags yaml.safe_load constructs (PyYAML's SafeConstructor), the loader axolotl, TRL, LLaMA-Factory and
# OmegaConf (torchtune) read configs with; any other tag stops the run with a ConstructorError.
_SAFE_TAGS = frozenset({"null", "bool", "int", "float", "binary", "timestamp", "omap", "pairs", "set", "str", "seq",
                        "map"})
_FLOAT_LIKE = re.compile(r"^[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)[eE][-+]?\d+$")


@dataclass(frozen=True)
class LoadedConfig:
    """A parsed config file: plain data, the 1-based line of every dotted key, reader diagnostics."""

    path: str
    data: Mapping[str, Any]
    key_lines: Mapping[str, int] = field(default_factory=dict)
    diagnostics: tuple[ConfigDiagnostic, ...] = ()
    format: str = "yaml"  # yaml | json
    # dotted keys whose plain scalar (`5e-5`: an exponent and no dot) yaml.safe_load keeps as a str, read here as a
    # float; a loader that hands yaml.safe_load's values on unconverted gives the framework the text
    text_numbers: frozenset[str] = frozenset()

    def line(self, dotted: str) -> int | None:
        """1-based line of a dotted key (``training.batch_size``, ``datasets.0.path``)."""
        return self.key_lines.get(dotted)

    def has(self, dotted: str) -> bool:
        return _lookup(self.data, dotted)[0]

    def get(self, dotted: str, default: Any = None) -> Any:
        found, value = _lookup(self.data, dotted)
        return value if found else default

    def section(self, dotted: str) -> LoadedConfig:
        """The mapping under *dotted* read as a file of its own: its keys, with their lines in this file (a
        `training_args:` block, an inline `deepspeed:` config)."""
        prefix = dotted + "."
        return replace(self, data=self.get(dotted), key_lines={k[len(prefix):]: v for k, v in self.key_lines.items()
                                                               if k.startswith(prefix)})


def _lookup(data: Any, dotted: str) -> tuple[bool, Any]:
    node = data
    for part in dotted.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def load_config(path: str | Path) -> LoadedConfig:
    """Read *path* (YAML, or JSON by extension or content) into a LoadedConfig."""
    p = Path(path)
    text = read_input_text(p, what="config", limit=MAX_FILE_BYTES)
    # a DeepSpeed file named .conf (hkust-nlp/dart-math's zero-stage2.conf) is read by json.load like a .json one
    is_json = p.suffix.lower() == ".json" or p.suffix.lower() not in (".yaml", ".yml") and text.lstrip().startswith("{")
    return parse_config(text, str(path), is_json=is_json)


def parse_config(text: str, path: str = "<string>", *, is_json: bool = False,
                 backend: str | None = None) -> LoadedConfig:
    """Parse config *text*; *path* names the file in messages and settings.

    *backend* ('libyaml' or 'ruamel') picks the composer; by default libyaml when present.
    JSON is validated as JSON (the frameworks read it with ``json``), then composed as YAML
    for its lines.
    """
    if not is_json:
        return _parse_yaml(text, path, "yaml", backend)
    data, json_diagnostics = _parse_json(text, path)
    try:
        with_lines = _parse_yaml(text, path, "json", backend)
    except SeqprofError:
        with_lines = None
    if with_lines is None or with_lines.data != data:
        return LoadedConfig(path=path, data=data, key_lines={}, diagnostics=json_diagnostics, format="json")
    return with_lines


def _compose(text: str, backend: str) -> Any:
    """The node graph of *text*: libyaml's C composer when available, else ruamel.yaml's pure one.

    Both resolve implicit tags with YAML 1.1 rules and keep marks; libyaml is ~100x faster,
    which is what lets a CI job lint hundreds of configs in about a second.
    """
    if backend == "libyaml":
        import yaml

        return yaml.compose(text, Loader=yaml.CSafeLoader)
    from ruamel.yaml import YAML

    yaml_ = YAML(typ="safe", pure=True)
    yaml_.version = (1, 1)  # PyYAML's resolution rules, which the frameworks load with
    return yaml_.compose(text)


def default_backend() -> str:
    """'libyaml' when PyYAML was built with libyaml, else 'ruamel'."""
    try:
        import yaml
    except ImportError:
        return "ruamel"
    return "libyaml" if getattr(yaml, "__with_libyaml__", False) else "ruamel"


def _parse_yaml(text: str, path: str, fmt: str, backend: str | None = None) -> LoadedConfig:
    backend = backend or default_backend()
    if backend == "libyaml":
        from yaml import MarkedYAMLError, YAMLError
    else:
        from ruamel.yaml.error import MarkedYAMLError, YAMLError  # type: ignore[assignment]
    try:
        root = _compose(text, backend)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        if "another document" in str(exc.problem):  # valid YAML, but a stream: yaml.safe_load refuses it too
            raise SeqprofError(f"the {fmt.upper()} holds more than one document (another starts at this line); "
                               "training frameworks load a config with yaml.safe_load, which refuses a stream",
                               path=path, line=line,
                               fix="keep one document per config file (a Kubernetes or compose manifest is no "
                                   "training config)") from None
        slots = _template_slots(text)
        raise SeqprofError(f"invalid {fmt.upper()}: {problem}", path=path, line=line,
                           fix=(f"the file is a template ({', '.join(slots[:3])}): lint the config your script "
                                "renders from it" if slots else "fix the syntax at that line")) from None
    except RecursionError:
        raise SeqprofError(f"{fmt.upper()} is nested too deeply to be a config", path=path) from None
    except YAMLError as exc:  # a reader error (a control character): its text spans lines
        raise SeqprofError(f"invalid {fmt.upper()}: {' '.join(str(exc).split())}", path=path,
                           fix="remove control characters; save the file as plain UTF-8 text") from None
    if root is None:
        raise SeqprofError("config is empty", path=path,
                           fix="a training config is a mapping of keys to values")
    builder = _Builder(path, text.splitlines())
    builder.check_size(root)
    if root.id != "mapping":
        raise SeqprofError(f"top level of the config is a {_KIND.get(root.id, root.id)}, not a mapping",
                           path=path, line=root.start_mark.line + 1,
                           fix="a training config is a mapping of keys to values")
    try:
        data = builder.build(root, "")
    except RecursionError:
        raise SeqprofError(f"{fmt.upper()} is nested too deeply to be a config", path=path) from None
    return LoadedConfig(path=path, data=data, key_lines=builder.lines,
                        diagnostics=tuple(builder.diagnostics), format=fmt,
                        text_numbers=frozenset(builder.text_numbers))


_SLOT = re.compile(r"(?<![{$])\{([A-Z][A-Z0-9_]*)\}(?!\})")  # str.format's `{DATASET_ARGS}`, not `${X}` or `{{x}}`


def _template_slots(text: str) -> list[str]:
    """The str.format placeholders a file that YAML cannot parse holds: nearai's finetune templates write
    `{DATASET_ARGS}` where their script puts a whole block, so the file is not meant to be read as it is."""
    return list(dict.fromkeys(f"{{{m.group(1)}}}" for m in _SLOT.finditer(text)))


def _parse_json(text: str, path: str) -> tuple[dict[str, Any], tuple[ConfigDiagnostic, ...]]:
    """Values as ``json`` reads them; duplicate keys noted (without lines: ``json`` has none)."""
    diagnostics: list[ConfigDiagnostic] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                diagnostics.append(ConfigDiagnostic(
                    kind="duplicate_key", key=key, file=path, line=1,
                    message=f"key '{key}' is set twice; JSON readers keep the last value"))
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise SeqprofError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno,
                           fix="fix the syntax at that line") from None
    except RecursionError:
        raise SeqprofError("JSON is nested too deeply to be a config", path=path) from None
    if not isinstance(data, dict):
        raise SeqprofError(f"top level of the config is a {type(data).__name__}, not a mapping",
                           path=path, line=1, fix="a training config is a mapping of keys to values")
    return data, tuple(diagnostics)


_KIND = {"scalar": "scalar value", "sequence": "list", "mapping": "mapping"}


class _Builder:
    """Plain values from a composed node graph, with lines, duplicates and bounded aliases."""

    def __init__(self, path: str, lines: list[str] | None = None) -> None:
        self.path = path
        self.text_lines = lines or []
        self.lines: dict[str, int] = {}
        self.diagnostics: list[ConfigDiagnostic] = []
        self.text_numbers: set[str] = set()

    def check_size(self, root: Any) -> None:
        """Refuse a graph whose alias expansion exceeds MAX_EXPANDED_NODES (or is cyclic)."""
        sizes: dict[int, int] = {}
        on_stack: set[int] = set()
        # iterative post-order walk: a deep file must not hit Python's recursion limit
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            nid = id(node)
            if done:
                on_stack.discard(nid)
                total = 1 + sum(sizes[id(c)] for c in _children(node))
                if total > MAX_EXPANDED_NODES:
                    raise SeqprofError(
                        f"aliases in this file expand to more than {MAX_EXPANDED_NODES:,} values "
                        "(an alias bomb, not a training config)", path=self.path,
                        line=node.start_mark.line + 1, fix="remove the nested anchors/aliases")
                sizes[nid] = total
                continue
            if nid in sizes:
                continue
            if nid in on_stack:
                raise SeqprofError("an alias refers to a node that contains it (recursive alias)",
                                   path=self.path, line=node.start_mark.line + 1,
                                   fix="remove the recursive anchor")
            on_stack.add(nid)
            stack.append((node, True))
            for child in _children(node):
                if id(child) in on_stack:
                    raise SeqprofError("an alias refers to a node that contains it (recursive alias)",
                                       path=self.path, line=child.start_mark.line + 1,
                                       fix="remove the recursive anchor")
                if id(child) not in sizes:
                    stack.append((child, False))

    def _project_constructs(self, tag: str) -> bool:
        """The project's own loader constructs *tag* (configue's `!path`): the value is read as written."""
        from seqprof.config.yaml_tags import constructed_by_project

        if tag.startswith(_TAG):  # only PyYAML's python/ tags, which a full or unsafe loader builds
            return tag.startswith(_TAG + "python/") and constructed_by_project(self.path, "!!" + tag[len(_TAG):]) \
                is not None
        return constructed_by_project(self.path, tag) is not None

    def build(self, node: Any, prefix: str) -> Any:
        tag = str(node.tag) if node.tag is not None else ""
        if tag and tag.removeprefix(_TAG) not in _SAFE_TAGS and not self._project_constructs(tag):
            shown = tag.replace(_TAG, "!!")
            raise SeqprofError(f"'{prefix or '(top level)'}' is tagged {shown}, which yaml.safe_load (what the "
                               "trainer reads its config with) cannot construct: the run would stop before training",
                               path=self.path, line=node.start_mark.line + 1,
                               fix=f"remove the {shown} tag and write the plain value")
        if node.id == "scalar":
            if node.tag == _TAG + "str" and not node.style and _FLOAT_LIKE.match(node.value):
                self.text_numbers.add(prefix)
            return _scalar(node)
        if node.id == "sequence":
            out = []
            for i, item in enumerate(node.value):
                dotted = f"{prefix}.{i}" if prefix else str(i)
                self.lines.setdefault(dotted, item.start_mark.line + 1)
                out.append(self.build(item, dotted))
            return out
        return self._mapping(node, prefix)

    def _mapping(self, node: Any, prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        merged: list[tuple[Any, Any]] = []
        explicit: list[tuple[Any, Any]] = []
        for key_node, value_node in node.value:
            if key_node.id == "scalar" and key_node.tag == _TAG + "merge":
                for source in (value_node.value if value_node.id == "sequence" else [value_node]):
                    if source.id == "mapping":
                        merged.extend(source.value)
            else:
                explicit.append((key_node, value_node))
        # merge keys (<<) supply defaults; explicit keys override them without a duplicate report
        for key_node, value_node in merged:
            key = _key_text(key_node)
            if key in out:
                continue
            dotted = f"{prefix}.{key}" if prefix else key
            out[key] = self.build(value_node, dotted)
            self.lines[dotted] = key_node.start_mark.line + 1
        for key_node, value_node in explicit:
            key = _key_text(key_node)
            dotted = f"{prefix}.{key}" if prefix else key
            line = key_node.start_mark.line + 1
            earlier = out.get(key)
            if key in out:  # a duplicate, or an override of a merged key: drop its old sub-lines
                self._forget(dotted)
            out[key] = self.build(value_node, dotted)
            self.lines[dotted] = line
            if key in first_line and self._anchors_only(first_line[key]):
                pass  # `define: &model_zoo_name ...` repeated: each line only names an anchor aliases reuse (SMoRE)
            elif key in first_line:
                # the same value twice loses nothing where the last one wins (PyYAML), but OmegaConf refuses
                # any duplicate: which matters is the dialect's (SP404)
                same = earlier == out[key]
                empty = earlier is None and out[key] is not None  # a template's empty placeholder, filled later
                self.diagnostics.append(ConfigDiagnostic(
                    kind="repeated_key" if same or empty else "duplicate_key", key=dotted, file=self.path,
                    line=line,
                    message=(f"key '{dotted}' is set twice (first on line {first_line[key]})"
                             + (", to the same value" if same else ", left empty there" if empty else
                                f"; YAML loaders keep the last value, so line {first_line[key]} is ignored")),
                    suggestion=None, other_line=first_line[key]))
            else:
                first_line[key] = line
        return out

    def _anchors_only(self, line: int) -> bool:
        """Whether the key on *line* gives its value an anchor (`key: &name value`): the value lives on in the aliases
        that name it, so a later key of the same name loses nothing the author meant to keep."""
        text = self.text_lines[line - 1] if 0 < line <= len(self.text_lines) else ""
        return re.search(r":\s*&[^\s,\]}]+", text) is not None

    def _forget(self, dotted: str) -> None:
        """Drop line entries under a key that a later duplicate replaces."""
        stale = [k for k in self.lines if k.startswith(dotted + ".")]
        for k in stale:
            del self.lines[k]


def _children(node: Any) -> Iterator[Any]:
    if node.id == "sequence":
        yield from node.value
    elif node.id == "mapping":
        for key_node, value_node in node.value:
            yield key_node
            yield value_node


def _key_text(node: Any) -> str:
    """A mapping key as text: the scalar's own spelling (``on:`` stays ``on``, not True)."""
    if node.id == "scalar":
        return str(node.value)
    # a complex key (? [a, b]) has no sensible dotted name; flow-render it
    return json.dumps(_plain(node), default=str)


def _plain(node: Any) -> Any:
    if node.id == "scalar":
        return node.value
    if node.id == "sequence":
        return [_plain(n) for n in node.value]
    return {_key_text(k): _plain(v) for k, v in node.value}


def _scalar(node: Any) -> Any:
    """A scalar under YAML 1.1 core rules; unknown tags are ignored (no object is built)."""
    value: str = node.value
    tag = str(node.tag) if node.tag is not None else ""
    if not tag.startswith(_TAG):
        return value  # a custom or python tag: the text, never an object
    kind = tag[len(_TAG):]
    try:
        if kind == "null":
            return None
        if kind == "bool":
            return value.lower() in ("yes", "true", "on", "y")
        if kind == "int":
            return _int11(value)
        if kind == "float":
            return _float11(value)
    except ValueError:
        return value
    if kind == "str" and not node.style and _FLOAT_LIKE.match(value):
        return float(value.replace("_", ""))
    return value


def _int11(text: str) -> int:
    s = text.replace("_", "")
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if s.startswith(("0b", "0B")):
        return sign * int(s[2:], 2)
    if s.startswith(("0x", "0X")):
        return sign * int(s[2:], 16)
    if s.startswith(("0o", "0O")):
        return sign * int(s[2:], 8)
    if ":" in s:  # sexagesimal, 1:30 == 90
        total = 0
        for part in s.split(":"):
            total = total * 60 + int(part)
        return sign * total
    if len(s) > 1 and s.startswith("0"):
        return sign * int(s, 8)
    return sign * int(s)


def _float11(text: str) -> float:
    s = text.replace("_", "").lower()
    if s in (".inf", "+.inf"):
        return float("inf")
    if s == "-.inf":
        return float("-inf")
    if s == ".nan":
        return float("nan")
    if ":" in s:
        sign = -1.0 if s.startswith("-") else 1.0
        total = 0.0
        for part in s.lstrip("+-").split(":"):
            total = total * 60 + float(part)
        return sign * total
    return float(s)


def resolve_linked_file(reference: str, config_path: str | Path) -> Path | None:
    """Find a file a config names (``deepspeed: ds_z3.json``): next to the config, then in its parents.

    Frameworks resolve these against the directory they are launched from, usually the
    repository root above the config (``examples/deepspeed/ds_z3_config.json``), so each
    ancestor of the config's directory is tried in turn. None when no candidate exists.
    """
    ref = Path(str(reference)).expanduser()
    if ref.is_absolute():
        return ref if ref.is_file() else None
    base = Path(config_path).resolve().parent
    for directory in (base, *base.parents):
        candidate = directory / ref
        if candidate.is_file():
            return candidate
    return None
