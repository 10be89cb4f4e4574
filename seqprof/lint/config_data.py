"""The data a config names, found offline: axolotl `datasets`, LLaMA-Factory `dataset`, TRL `dataset_name`.

Each framework's own loader decides where a name points, and seqprof follows it without the network:
- axolotl (src/axolotl/utils/data/shared.py `load_dataset_with_config` @ 067b021c): `path` is a local
  file or directory when `Path(path).exists()` (relative to the working directory), else a hub id; a
  directory is `load_from_disk` unless `data_files` names files; a hub id with `data_files` reads those
  files of the repo (`_load_from_data_files`). seqprof also looks beside the config when the working
  directory misses, and says so. `type` (prompt_strategies/, utils/data/wrappers.py) sets the fields.
- LLaMA-Factory (src/llamafactory/data/parser.py `get_dataset_list` @ ff6d4d12): `dataset: a,b` are keys
  of `<dataset_dir>/dataset_info.json` (dataset_dir defaults to "data", relative to the working
  directory, hparams/data_args.py); an entry's `file_name` is under dataset_dir (data/loader.py), its
  `hf_hub_url` a hub id; `formatting` alpaca|sharegpt|openai, `columns` and `tags` set the fields.
- TRL (trl/scripts/utils.py ScriptArguments): `dataset_name` (+ `dataset_config`,
  `dataset_train_split`, default train) is a hub id or a local path; `datasets:` entries carry `path`,
  `name`, `split`.
Hub ids are read only from the local caches (seqprof.dataset.hf_datasets). A dataset seqprof cannot
find or cannot render is kept with the reason, so lint can say it and skip the data rules as usual.
"""

from __future__ import annotations

import heapq
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from seqprof.config.plan import Plan
from seqprof.config.values import placeholder
from seqprof.dataset.profile import DatasetInfo, Profile
from seqprof.errors import SeqprofError
from seqprof.inputs import MiB, read_input_text

MAX_INFO_BYTES = 16 * MiB  # LLaMA-Factory's own dataset_info.json is 18 KB
CACHE_ONLY = "not a local path and not in the local HF cache; pass --data"


@dataclass(frozen=True)
class ChosenTemplate:
    """The chat template a config chooses, as its framework resolves the choice (neither path nor text: the
    tokenizer's own template, and `origin` says why)."""

    origin: str  # for the stderr line: "axolotl 0.18.0's 'chatml' template", "the inline chat_template_jinja"
    path: str | None = None  # a .jinja file
    text: str | None = None  # inline Jinja


@dataclass(frozen=True)
class ConfigDataset:
    """One dataset the config names: what the reader is given, how its rows read, or why it cannot be."""

    name: str  # as the config names it
    kind: str  # the framework's own format label (alpaca, chat_template, sharegpt, ...)
    spec: str | None = None  # a path or hub id for seqprof.dataset.reader.resolve_source
    split: str | None = None
    subset: str | None = None
    schema: str | None = None  # seqprof schema to read rows as (None: detect from the first row)
    columns: tuple[tuple[str, str], ...] = ()  # schema role -> column
    problem: str | None = None  # why it is not read (None: it can be)
    note: str | None = None  # how it was found, when that is worth saying (beside the config, a slice ignored)
    template: ChosenTemplate | None = None  # this entry's own choice (axolotl datasets[].chat_template)


@dataclass(frozen=True)
class UndefinedDatasets:
    """The names one config key (`dataset`, `eval_dataset`) gives that the registry lacks: where, and near misses."""

    key: str
    file: str
    line: int | None
    names: tuple[str, ...]
    close: tuple[str, ...] = ()  # registered names one of them is probably a typo of


@dataclass(frozen=True)
class UnparsableRegistry:
    """A dataset_info.json json.load refuses, while the config names datasets to look up in it: where the config
    names them, and json's complaint."""

    key: str
    file: str
    line: int | None
    reason: str


@dataclass(frozen=True)
class DatasetRegistry:
    """LLaMA-Factory's `<dataset_dir>/dataset_info.json` as the config's run reads it (data/parser.py
    get_dataset_list): every name in `dataset` and `eval_dataset` must be one of its keys, or the run stops with
    "Undefined dataset NAME in dataset_info.json." before any data is read."""

    path: str  # as shown to the user
    names: tuple[str, ...]  # registered
    undefined: tuple[UndefinedDatasets, ...] = ()
    note: str | None = None  # how it was found, when not in the working directory
    unparsable: UnparsableRegistry | None = None  # no JSON: the run stops before it looks any name up


@dataclass(frozen=True)
class ConfigData:
    """Every dataset one config names, found or not, and the chat template file it names (if any)."""

    config: str
    datasets: tuple[ConfigDataset, ...] = ()
    template: ChosenTemplate | None = None  # the config's choice (None: the tokenizer's own template)
    registry: DatasetRegistry | None = None  # LLaMA-Factory's dataset_info.json, when one was read

    @property
    def chat_template(self) -> str | None:
        """The template file the config names (an input, so no output may replace it)."""
        return self.template.path if self.template else None

    @property
    def found(self) -> tuple[ConfigDataset, ...]:
        return tuple(d for d in self.datasets if d.problem is None)

    @property
    def missing(self) -> tuple[ConfigDataset, ...]:
        return tuple(d for d in self.datasets if d.problem is not None)


def find_config_data(plan: Plan, *, cwd: Path | None = None) -> ConfigData:
    """The datasets `plan` names, resolved against the working directory and the local HF caches."""
    cwd = Path.cwd() if cwd is None else cwd
    finder = {"axolotl": _axolotl, "llamafactory": _llamafactory, "trl": _trl}.get(plan.dialect)
    if finder is None:
        return ConfigData(config=plan.path)
    datasets, template = finder(plan, cwd)
    registry = dataset_registry(plan, cwd=cwd) if plan.dialect == "llamafactory" else None
    return ConfigData(config=plan.path, datasets=tuple(_checked(d) for d in datasets), template=template,
                      registry=registry)


def profile_config_data(data: ConfigData, tokenizer: str | None, *, workers: int = 1,
                        warn: Callable[[str], None] | None = None) -> Profile | None:
    """Analyze every dataset found (one stderr line each, read or not) and merge them into one Profile."""
    from seqprof.dataset.analyze import AnalyzeOptions, build_profile

    say = warn or (lambda line: None)
    config = Path(data.config).name
    profiles = []
    for ds in data.datasets:
        if ds.problem is not None:
            say(f"lint: could not read dataset {ds.name!r}: {ds.problem}")
            continue
        chosen = ds.template or data.template
        options = AnalyzeOptions(tokenizer=tokenizer, chat_template=chosen.path if chosen else None,
                                 chat_template_text=chosen.text if chosen else None, schema=ds.schema,
                                 columns=dict(ds.columns) or None, split=ds.split, subset=ds.subset,
                                 workers=workers)
        try:
            profile = build_profile(_shown(ds.spec), options)
        except SeqprofError as exc:
            say(f"lint: could not read dataset {ds.name!r}: {exc}")
            continue
        note = "".join(f"; {n}" for n in (ds.note, chosen and f"chat template: {chosen.origin}") if n)
        say(f"lint: read {profile.dataset.rows:,} rows of {_shown(ds.spec)} ({ds.kind}) for {config}{note}")
        profiles.append(profile)
    return merge_profiles(profiles) if profiles else None


def merge_profiles(profiles: list[Profile]) -> Profile:
    """Several datasets trained as one: histograms added, the recommendation taken from the sum."""
    from seqprof.dataset.analyze import LONGEST_KEPT
    from seqprof.dataset.recommend import recommend_max_seq_length

    if len(profiles) == 1:
        return profiles[0]
    sequence = profiles[0].sequence
    fields = dict(profiles[0].fields)
    for p in profiles[1:]:
        sequence = sequence.merge(p.sequence)
        for name, hist in p.fields.items():
            fields[name] = fields[name].merge(hist) if name in fields else hist
    first = profiles[0]

    def common(values: list[str]) -> str:
        return values[0] if len(set(values)) == 1 else "mixed"

    dataset = DatasetInfo(path=" + ".join(p.dataset.path for p in profiles),
                          format=common([p.dataset.format for p in profiles]),
                          rows=sum(p.dataset.rows for p in profiles),
                          skipped_rows=sum(p.dataset.skipped_rows for p in profiles),
                          schema=common([p.dataset.schema for p in profiles]))
    longest = heapq.nlargest(LONGEST_KEPT, (e for p in profiles for e in p.longest), key=lambda e: e.length)
    return replace(first, dataset=dataset, sequence=sequence, fields=fields,
                   recommendation=recommend_max_seq_length(sequence), longest=tuple(longest))


def config_data_files(configs: Sequence[str | Path], *, dialect: str | None = None) -> list[Path]:
    """Every data file the configs name and seqprof would read (an output must be none of them)."""
    from seqprof.config.read import read_plan
    from seqprof.dataset.reader import resolve_source

    files: list[Path] = []
    for config in configs:
        try:
            named = find_config_data(read_plan(str(config), dialect=dialect))
        except SeqprofError:
            continue  # the lint run itself reports the config
        for ds in named.found:
            files += resolve_source(ds.spec, split=ds.split, subset=ds.subset).files
        files += [Path(t.path) for t in (named.template, *(d.template for d in named.found)) if t and t.path]
    return files


# --- resolving ---------------------------------------------------------------------------------------------


def _checked(ds: ConfigDataset) -> ConfigDataset:
    """Resolve the spec now (cheap: names files, reads none), so a miss is said before any tokenizing."""
    if ds.problem is not None:
        return ds
    from seqprof.dataset.hf_datasets import DATA_SUFFIXES
    from seqprof.dataset.reader import resolve_source

    try:
        resolve_source(ds.spec, split=ds.split, subset=ds.subset)
    except SeqprofError as exc:
        hub_id = re.fullmatch(r"[\w.-]+/[\w.-]+", ds.spec) and not ds.spec.lower().endswith(DATA_SUFFIXES)
        return replace(ds, problem=CACHE_ONLY if hub_id and not Path(ds.spec).exists() else str(exc))
    return ds


def _shown(spec: str) -> str:
    """A found path as the user would type it: relative to the working directory when under it."""
    try:
        return str(Path(spec).relative_to(Path.cwd()))
    except ValueError:
        return spec


def _local_or_hub(path: str, cwd: Path, config: Path) -> tuple[str, str | None]:
    """A path as the framework resolves it (the working directory), else beside the config, else a hub id."""
    expanded = Path(os.path.expanduser(path))
    if expanded.is_absolute():
        return str(expanded), None
    if (cwd / expanded).exists():
        return str(cwd / expanded), None
    beside = config.resolve().parent / expanded
    if beside.exists():
        return str(beside), "found beside the config (the framework looks in the working directory)"
    return path, None


def _hub_snapshot(repo_id: str) -> Path | None:
    """The local snapshot of a hub dataset repo (for files a config names inside it), as analyze picks it."""
    from seqprof.dataset.hf_datasets import hub_dataset_repos, hub_snapshot

    return next((snap for repo in hub_dataset_repos(repo_id) if (snap := hub_snapshot(repo)) is not None), None)


def _split(value: Any) -> tuple[str | None, str | None]:
    """axolotl/datasets split strings may slice ('train[:500]'): the split, and a note that the slice is not."""
    if not isinstance(value, str) or not value:
        return None, None
    name, bracket, _ = value.partition("[")
    return name, (f"split slice {value!r} not applied: the whole split is counted" if bracket else None)


# --- axolotl -----------------------------------------------------------------------------------------------

# type -> (seqprof schema, role -> column from the entry's own keys with their axolotl defaults)
_AXOLOTL_UNRENDERED = {
    "input_output": "its segments are labelled per span; seqprof does not render them",
    # a note on what was read, not a verdict: axolotl 0.4 and older (and forks of them) still load sharegpt;
    # SP431 judges the pinned release
    "sharegpt": "seqprof does not render sharegpt conversations (axolotl refuses `type: sharegpt` from 0.5 on, "
                "where chat_template replaces it)",
}


def _axolotl(plan: Plan, cwd: Path) -> tuple[list[ConfigDataset], ChosenTemplate | None]:
    entries = plan.raw.get("datasets")
    if entries is None and plan.raw.get("pretraining_dataset") is not None:  # streamed text, `text_column`
        entries = plan.raw.get("pretraining_dataset")
        entries = [{**e, "type": "completion", "field": e.get("text_column") or "text"} if isinstance(e, Mapping)
                   else e for e in (entries if isinstance(entries, list) else [entries])]
    if entries is None:
        return [], None
    out = []
    for entry in entries if isinstance(entries, list) else [entries]:
        entry = {"path": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
            out.append(ConfigDataset(name=str(entry), kind="?", problem="a datasets entry without a path"))
            continue
        out.extend(_axolotl_entry(entry, plan, cwd))
    return out, axolotl_template(plan.raw.get("chat_template"), plan.raw.get("chat_template_jinja"), cwd)


def axolotl_template(choice: Any, jinja: Any, cwd: Path) -> ChosenTemplate | None:
    """axolotl's chat_template choice as utils/chat_templates/base.py get_chat_template resolves it: `jinja`
    reads chat_template_jinja (a file when one exists at that path, else the template itself), a name is one
    of the .jinja files axolotl ships (read from the installed axolotl, never imported), and tokenizer_default
    (the default) or tokenizer_default_fallback_<name> use the tokenizer's own."""
    if not isinstance(choice, str) or choice in ("", "tokenizer_default"):
        return None
    if choice == "jinja":
        if not isinstance(jinja, str) or not jinja:
            return ChosenTemplate("chat_template: jinja without chat_template_jinja (axolotl refuses it); "
                                  "the tokenizer's own template was counted")
        path = Path(os.path.expanduser(jinja))
        path = path if path.is_absolute() else cwd / path
        if len(jinja) < 4096 and "{" not in jinja and path.is_file():
            return ChosenTemplate(f"chat_template_jinja {jinja}", path=str(path))
        return ChosenTemplate("the config's inline chat_template_jinja", text=jinja)
    if choice.startswith("tokenizer_default_fallback_"):
        return ChosenTemplate(f"the tokenizer's own (axolotl uses '{choice[27:]}' only when it has none)")
    shipped = _axolotl_shipped_template(choice)
    if shipped is None:
        return ChosenTemplate(f"axolotl's '{choice}' is not installed here (pip install axolotl to count with "
                              "it); the tokenizer's own template was counted")
    version, path = shipped
    return ChosenTemplate(f"axolotl {version}'s '{choice}'", path=str(path))


def _axolotl_shipped_template(name: str) -> tuple[str, Path] | None:
    """axolotl's utils/chat_templates/templates/<name>.jinja in the installed distribution, if any."""
    from importlib import metadata

    if not re.fullmatch(r"[\w.-]+", name):
        return None
    try:
        dist = metadata.distribution("axolotl")
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(f"axolotl/utils/chat_templates/templates/{name}.jinja")))
    return (dist.version, path) if path.is_file() else None


def _axolotl_entry(entry: Mapping, plan: Plan, cwd: Path) -> list[ConfigDataset]:
    name = entry["path"]
    kind = entry.get("type")
    kind_label = kind if isinstance(kind, str) else "user-defined" if isinstance(kind, Mapping) else "none"
    schema, columns, problem = _axolotl_fields(entry, kind, plan)
    split, slice_note = _split(entry.get("split"))
    subset = entry.get("name") if isinstance(entry.get("name"), str) else None
    own = axolotl_template(entry.get("chat_template"), entry.get("chat_template_jinja"), cwd) \
        or ChosenTemplate("the tokenizer's own (the entry's chat_template: tokenizer_default)") \
        if entry.get("chat_template") else None  # base.py extract_chat_template_args: the entry's choice first
    base = ConfigDataset(name=name, kind=kind_label, split=split, subset=subset, schema=schema,
                         columns=columns, problem=problem, note=slice_note, template=own)
    if problem:
        return [base]
    spec, where = _local_or_hub(name, cwd, Path(plan.path))
    files = entry.get("data_files")
    files = [files] if isinstance(files, str) else files if isinstance(files, list) else None
    note = "; ".join(n for n in (where, slice_note) if n) or None
    if not files:
        return [replace(base, spec=spec, note=note)]
    if Path(spec).is_dir():  # load_dataset(type, data_files=...): the files resolve from the working directory
        return [replace(base, name=f"{name}:{f}", spec=str(cwd / f), note=note) for f in files]
    snapshot = _hub_snapshot(name)
    if snapshot is None:
        return [replace(base, problem=CACHE_ONLY)]
    return [replace(base, name=f"{name}:{f}", spec=str(snapshot / f), split=None, note=note) for f in files]


def _axolotl_fields(entry: Mapping, kind: Any, plan: Plan) -> tuple[str | None, tuple, str | None]:
    """The seqprof schema and columns of an axolotl dataset `type`, or why seqprof cannot render it."""
    if not isinstance(kind, str) or not kind:
        return None, (), ("a user-defined prompt type" if isinstance(kind, Mapping) else "no `type` given")
    base = kind.split(".")[0]
    if plan.get("trainer") not in (None, "sft", "pretrain"):
        return None, (), f"{plan.get('trainer')} datasets (type {kind}) are not rendered by seqprof"
    if base in _AXOLOTL_UNRENDERED:
        return None, (), f"type {kind}: {_AXOLOTL_UNRENDERED[base]}"
    if kind == "alpaca":  # utils/data/wrappers.py _handle_alpaca_dataset: instruction, input, output
        return "alpaca", (), None
    if kind == "completion":  # prompt_strategies/completion.py: `field`, default "text"
        return "text", (("text", str(entry.get("field") or "text")),), None
    if base in ("chat_template", "messages"):  # prompt_strategies/chat_template.py StrategyLoader
        mappings = dict(entry.get("message_property_mappings") or {})
        for old, role in (("message_field_role", "role"), ("message_field_content", "content")):
            if entry.get(old):  # schemas/utils.py: the deprecated keys fill message_property_mappings
                mappings.setdefault(role, entry[old])
        pair = (mappings.get("role", "role"), mappings.get("content", "content"))
        if pair not in (("role", "content"), ("from", "value")):
            return None, (), (f"message_property_mappings {pair[0]}/{pair[1]}: seqprof reads role/content "
                              "or from/value messages")
        return "messages", (("messages", str(entry.get("field_messages") or "messages")),), None
    return None, (), f"type {kind} is not one seqprof renders (alpaca, completion, chat_template)"


# --- LLaMA-Factory -----------------------------------------------------------------------------------------

_SHAREGPT_TAGS = ({"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt"},
                  {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant"})


def _readable_tags(tags: Mapping[str, Any]) -> bool:
    """Whether the dataset reader (seqprof.dataset.schema) reads messages tagged so: ShareGPT's from/value with any
    speaker names it maps to user and assistant (`user_tag: user` too), or role/content with the roles as they are."""
    from seqprof.dataset.schema import SHAREGPT_ROLES

    if (tags["role_tag"], tags["content_tag"]) == ("from", "value"):
        return SHAREGPT_ROLES.get(str(tags["user_tag"]).lower()) == "user" and \
            SHAREGPT_ROLES.get(str(tags["assistant_tag"]).lower()) == "assistant"
    return tags == _SHAREGPT_TAGS[1]


def _llamafactory_names(value: Any) -> list[str]:
    """`dataset: a, b` as DataArguments.__post_init__ splits it (split_arg); a YAML list passes as it is."""
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    return [str(n) for n in value] if isinstance(value, list) else []


def _llamafactory_info(plan: Plan, cwd: Path) -> tuple[Path | None, str | None]:
    """Where the run reads dataset_info.json: `<dataset_dir>` under the working directory (hparams/data_args.py,
    default "data"); where that has none, the same folder under the config's folder or a parent up to the
    repository root (`llamafactory-cli train examples/x.yaml` is run from the checkout's root), said in the note.
    (None, None) for ONLINE / REMOTE: registries, which seqprof does not fetch."""
    folder = plan.raw.get("dataset_dir") or "data"
    if not isinstance(folder, str) or folder == "ONLINE" or folder.startswith("REMOTE:"):
        return None, None
    name = _info_name(plan)
    if Path(folder).is_absolute():
        return Path(folder) / name, None
    if (cwd / folder / name).exists():  # what the run opens, a FIFO too (refused, not waited on)
        return cwd / folder / name, None
    for parent in _working_directories(plan, cwd)[1:]:
        if (parent / folder / name).is_file():
            return parent / folder / name, (
                "the config's project's; LLaMA-Factory reads dataset_dir from the working directory, so run it there")
    return cwd / folder / name, None


_DATA_CONFIG = re.compile(r"^DATA_CONFIG\s*=\s*[\"']([^\"'/\\]+)[\"']", re.M)


def _info_name(plan: Plan) -> str:
    """The registry's file name: "dataset_info.json" (extras/constants.py DATA_CONFIG), or the one a copy of
    LLaMA-Factory the config's repository carries renames it to (codeshuttler's fork: custom_dataset_info.json)."""
    from seqprof.config.project_fields import project_root, python_files, source_text

    path = Path(plan.path)
    if path.is_file():
        for file in python_files(project_root(path)):
            if file.name == "constants.py" and file.parent.name == "extras":
                found = _DATA_CONFIG.search(source_text(file))
                if found:
                    return found.group(1)
    return "dataset_info.json"


def _working_directories(plan: Plan, cwd: Path) -> list[Path]:
    """Where a LLaMA-Factory run of the config may start: here, else the config's folder or a parent up to the
    repository root (`llamafactory-cli train examples/x.yaml` from the checkout's root, or from SFT/)."""
    from seqprof.config.versions import project_folders

    return [cwd, *project_folders(Path(plan.path).resolve().parent)]


def _registered_elsewhere(plan: Plan, cwd: Path, chosen: Path) -> frozenset[str]:
    """The names the registries at the config's other possible working directories define: `dataset_dir: ../data` in
    SFT/examples/x.yaml is the repository's data/ when the README runs it from SFT/, and SFT/data/ from SFT/examples/.
    A name one of them registers is no sure error."""
    folder = plan.raw.get("dataset_dir") or "data"
    names: set[str] = set()
    for parent in _working_directories(plan, cwd):
        other = (parent / folder / chosen.name).resolve()  # the registry's own name (_info_name), not found again
        if other != chosen.resolve() and other.is_file():
            names |= set(map(str, _registry(other) or {}))
    return frozenset(names)


def _registered_by_project_code(plan: Plan, registry_name: str, names: Iterable[str]) -> frozenset[str]:
    """The names a script of the config's project writes into the registry before the run: Clive718's
    dpo/scripts/prepare_kto_data.py loads dpo/data/dataset_info.json, sets `registry["code_kto_train"] = {...}`
    and writes it back, so the committed file lacks the name the config uses. A script that names the registry's
    file and assigns the name as a key (`["name"] =` or `"name": {`) counts."""
    from seqprof.config.project_fields import project_root, python_files, source_text

    path = Path(plan.path)
    names = [n for n in names if n]
    if not names or not path.is_file():
        return frozenset()
    found: set[str] = set()
    for file in python_files(project_root(path)):
        text = source_text(file)
        if registry_name not in text:
            continue
        found.update(n for n in names if re.search(
            rf"""\[\s*["']{re.escape(n)}["']\s*\]\s*=(?!=)|["']{re.escape(n)}["']\s*:\s*\{{""", text))
    return frozenset(found)


def _registry(info_path: Path) -> dict | None:
    """A dataset_info.json's mapping of names, or None when it is unreadable or not a mapping."""
    try:
        info = _read_info(info_path)
    except (SeqprofError, json.JSONDecodeError, RecursionError, UnicodeDecodeError):
        return None
    return info if isinstance(info, dict) else None


def _read_info(info_path: Path) -> Any:
    # read_input_text refuses a FIFO, a device or a huge file rather than hang on it
    return json.loads(read_input_text(info_path, what="dataset_info.json", limit=MAX_INFO_BYTES))


def dataset_registry(plan: Plan, *, cwd: Path | None = None) -> DatasetRegistry | None:
    """The registry a LLaMA-Factory config's `dataset` / `eval_dataset` names are looked up in, and the names it
    lacks; None when there is none to read (not found, unreadable, ONLINE), or when `tokenized_path` is set (the
    run may load tokenized data from disk and never look the names up: data/loader.py get_dataset)."""
    cwd = Path.cwd() if cwd is None else cwd
    if plan.raw.get("tokenized_path"):
        return None
    info_path, note = _llamafactory_info(plan, cwd)
    if info_path is None or not info_path.is_file():
        return None
    try:
        info = _read_info(info_path)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _unparsable(plan, info_path, note, str(exc))
    except (SeqprofError, RecursionError):
        return None  # too large or too deep for seqprof, not necessarily for json.load
    if not isinstance(info, dict):
        return None
    import difflib

    registered = tuple(map(str, info))
    elsewhere = _registered_elsewhere(plan, cwd, info_path)
    unlisted = [n for key in ("dataset", "eval_dataset") for n in _llamafactory_names(plan.raw.get(key))
                if n not in info and n not in elsewhere]
    elsewhere |= _registered_by_project_code(plan, info_path.name, unlisted)
    undefined = []
    overridden = _set_on_the_command_line(plan.path)
    for key in ("dataset", "eval_dataset"):
        if key in overridden:
            continue  # `llamafactory-cli train x.yaml dataset=sft_27k`: OmegaConf merges it over the file's value
        # `dataset: ${DATASET}`: a stand-in a launcher fills before LLaMA-Factory reads the file (envsubst, sed)
        missing = tuple(n for n in _llamafactory_names(plan.raw.get(key))
                        if n not in info and n not in elsewhere and placeholder(n) is None)
        if missing:
            near = [difflib.get_close_matches(n, registered, n=2, cutoff=0.8) for n in missing]
            close = tuple(dict.fromkeys(m[0] for m in near if len(m) == 1))  # only where one name is near
            undefined.append(UndefinedDatasets(key=key, file=plan.path, line=plan.key_lines.get(key), names=missing,
                                               close=close))
    return DatasetRegistry(path=_shown(str(info_path)), names=registered, undefined=tuple(undefined), note=note)


def _unparsable(plan: Plan, info_path: Path, note: str | None, reason: str) -> DatasetRegistry | None:
    """The registry json.load refuses (a trailing comma; *reason* is json's complaint): get_dataset_list raises
    "Cannot open <it> due to ..." as soon as the config names a dataset (data/parser.py, from v0.5 to v0.9.5); with
    no name it reads nothing."""
    overridden = _set_on_the_command_line(plan.path)
    for key in ("dataset", "eval_dataset"):
        names = [n for n in _llamafactory_names(plan.raw.get(key)) if placeholder(n) is None]
        if names and key not in overridden:
            return DatasetRegistry(path=_shown(str(info_path)), names=(), note=note, unparsable=UnparsableRegistry(
                key=key, file=plan.path, line=plan.key_lines.get(key), reason=reason))
    return None


def _set_on_the_command_line(config_path: str) -> frozenset[str]:
    """The keys a launch line naming the config passes itself (hexuan21/LLaMA-Factory's `dataset: None  # set in
    cmd args` beside `llamafactory-cli train <it> dataset=sft_27k`)."""
    from seqprof.config.launches import launch_overrides

    return launch_overrides(config_path) if Path(config_path).is_file() else frozenset()


def _llamafactory(plan: Plan, cwd: Path) -> tuple[list[ConfigDataset], ChosenTemplate | None]:
    names = _llamafactory_names(plan.raw.get("dataset"))
    if not names:
        return [], None
    info_path, found_note = _llamafactory_info(plan, cwd)
    if info_path is None:
        return [_llamafactory_hub(str(n), {}, "online") for n in names], None
    root = info_path.parent
    if not info_path.exists():
        problem = (f"{info_path} not found (LLaMA-Factory reads dataset_dir, default 'data', from the working "
                   "directory); run lint from there or pass --data")
        return [ConfigDataset(name=str(n), kind="?", problem=problem) for n in names], None
    try:
        info = _read_info(info_path)
    except (SeqprofError, json.JSONDecodeError, RecursionError, UnicodeDecodeError) as exc:
        problem = f"{info_path} unreadable ({exc})"
        return [ConfigDataset(name=str(n), kind="?", problem=problem) for n in names], None
    out = []
    for name in map(str, names):
        attr = info.get(name) if isinstance(info, dict) else None
        if not isinstance(attr, dict):
            out.append(ConfigDataset(name=name, kind="?", problem=f"not defined in {info_path}"))
        elif "hf_hub_url" in attr:
            out.append(_llamafactory_hub(attr["hf_hub_url"], attr, name))
        elif "file_name" in attr:
            out.append(_llamafactory_fields(ConfigDataset(name=name, kind=attr.get("formatting", "alpaca"),
                                                          spec=str(root / attr["file_name"]), note=found_note),
                                            attr))
        else:
            source = next((k for k in ("ms_hub_url", "om_hub_url", "script_url", "cloud_file_name") if k in attr),
                          "no file_name")
            out.append(ConfigDataset(name=name, kind="?", problem=f"{source}: seqprof reads file_name or "
                                                                  "hf_hub_url entries only"))
    return out, _llamafactory_template(plan.raw.get("template"))


def _llamafactory_template(name: Any) -> ChosenTemplate | None:
    """LLaMA-Factory formats turns with its own Template objects (data/template.py), not a Jinja template.
    seqprof does not run that formatter: the tokenizer's own template is counted, and the stderr line says so."""
    if not isinstance(name, str) or name in ("", "empty"):
        return None
    return ChosenTemplate(f"LLaMA-Factory's '{name}' is its own formatter (data/template.py), not run: the "
                          "tokenizer's own was counted")


def _llamafactory_hub(repo: str, attr: Mapping, name: str) -> ConfigDataset:
    ds = ConfigDataset(name=name if name != "online" else repo, kind=attr.get("formatting", "alpaca"), spec=repo,
                       split=attr.get("split") or "train", subset=attr.get("subset"))
    return _llamafactory_fields(ds, attr)


def _llamafactory_fields(ds: ConfigDataset, attr: Mapping) -> ConfigDataset:
    """parser.py DatasetAttr: alpaca prompt/query/response columns; sharegpt messages column and tags."""
    columns = attr.get("columns") if isinstance(attr.get("columns"), dict) else {}
    if attr.get("ranking") or columns.get("kto_tag"):
        return replace(ds, problem="a ranking (preference) or KTO dataset: seqprof renders SFT rows only")
    if ds.kind == "alpaca":
        mapped = {"instruction": columns.get("prompt", "instruction"), "input": columns.get("query", "input"),
                  "output": columns.get("response", "output")}
        return replace(ds, schema="alpaca", columns=tuple(sorted(mapped.items())))
    if ds.kind in ("sharegpt", "openai"):
        tags = attr.get("tags") if isinstance(attr.get("tags"), dict) else {}
        defaults = _SHAREGPT_TAGS[0] if ds.kind == "sharegpt" else _SHAREGPT_TAGS[1]
        given = {k: tags.get(k, v) for k, v in defaults.items()}
        if not _readable_tags(given):
            return replace(ds, problem=f"tags {given}: seqprof reads from/value messages (speakers human/user, "
                                       "gpt/assistant) or role/content (user, assistant)")
        return replace(ds, schema="messages", columns=(("messages", columns.get("messages", "conversations")),))
    return replace(ds, problem=f"formatting {ds.kind!r} is not alpaca, sharegpt or openai")


# --- TRL -----------------------------------------------------------------------------------------------------


def _trl(plan: Plan, cwd: Path) -> tuple[list[ConfigDataset], ChosenTemplate | None]:
    raw = plan.raw
    text_field = raw.get("dataset_text_field")
    columns = (("text", text_field),) if isinstance(text_field, str) and text_field != "text" else ()
    entries: list[Mapping] = []
    if isinstance(raw.get("dataset_name"), str):
        entries.append({"path": raw["dataset_name"], "name": raw.get("dataset_config"),
                        "split": raw.get("dataset_train_split") or "train"})
    elif isinstance(raw.get("datasets"), list):
        entries = [e for e in raw["datasets"] if isinstance(e, Mapping) and isinstance(e.get("path"), str)]
    out = []
    for entry in entries:
        split, slice_note = _split(entry.get("split") or "train")
        spec, where = _local_or_hub(entry["path"], cwd, Path(plan.path))
        out.append(ConfigDataset(name=entry["path"], kind="trl", spec=spec, split=split,
                                 subset=entry.get("name") if isinstance(entry.get("name"), str) else None,
                                 columns=columns, note="; ".join(n for n in (where, slice_note) if n) or None))
    template = raw.get("chat_template_path")
    if isinstance(template, str):  # SFTConfig.chat_template_path: a .jinja file, or a tokenizer directory
        path = Path(template) if Path(template).is_absolute() else cwd / template
        path = path / "chat_template.jinja" if path.is_dir() else path
        return out, ChosenTemplate(f"chat_template_path {template}", path=str(path)) if path.is_file() else None
    return out, None


__all__ = ["ChosenTemplate", "ConfigData", "ConfigDataset", "config_data_files", "find_config_data", "merge_profiles", "profile_config_data"]
