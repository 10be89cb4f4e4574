"""What every dialect shares: building Settings with provenance, checking keys, linked JSON files."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from seqprof.config.loader import LoadedConfig, load_config, resolve_linked_file
from seqprof.config.plan import ConfigDiagnostic, Setting
from seqprof.config.values import placeholder, shown_placeholder, value_problem

KEYS_DIR = Path(__file__).with_name("keys")

_MISSING = object()


@dataclass(frozen=True)
class Moved:
    """A key a framework renamed or deprecated: the replacement (if any) and why, with a source."""

    replacement: str | None
    why: str
    value_change: str | None = None  # how the value changes with the new key (a switch that became a choice)
    replacement_from: str | None = None  # the release from which the replacement reads this value (else: its arrival)
    inert: tuple = ()  # values that do what leaving the key out does, in the release that dropped it: a parser that
    #                    drops unknown keys (allow_extra_keys=True) loses nothing with them (no_cuda: false)


@dataclass(frozen=True)
class Keyspace:
    """The keys one dialect accepts at one level, and those it renamed or deprecated."""

    known: frozenset[str]
    renamed: Mapping[str, Moved] = field(default_factory=dict)
    deprecated: Mapping[str, Moved] = field(default_factory=dict)
    # the keys a near miss is a typo of (default: all known): transformers' example-script arguments are known but
    # belong to scripts a project may not run, so `max_seq_len` is no typo of run_glue's `max_seq_length`
    typo_targets: frozenset[str] | None = None

    def all_names(self) -> frozenset[str]:
        return self.known | frozenset(self.renamed) | frozenset(self.deprecated)


@dataclass
class DialectResult:
    """What a dialect module hands back: canonical settings and the diagnostics it found."""

    settings: dict[str, Setting]
    diagnostics: list[ConfigDiagnostic]


class Builder:
    """Collects canonical Settings for one config, each with its key, file and line."""

    def __init__(self, cfg: LoadedConfig) -> None:
        self.cfg = cfg
        self.settings: dict[str, Setting] = {}
        self.diagnostics: list[ConfigDiagnostic] = []

    def present(self, key: str) -> bool:
        """True when *key* is in the file with a non-null value (null means 'use the default')."""
        return self.cfg.get(key) is not None

    def raw(self, key: str, default: Any = None) -> Any:
        value = self.cfg.get(key)
        return default if value is None else value

    def stated(self, name: str, key: str, transform: Callable[[Any], Any] | None = None,
               *, overwrite: bool = False) -> bool:
        """Set canonical *name* from config *key* when the key is present; True if it was."""
        if not self.present(key) or (self._taken(name) and not overwrite):
            return False
        value = self.cfg.get(key)
        stand_in = placeholder(value)
        if stand_in:  # filled in before the run: no value to check, and none to estimate with
            self.diagnostics.append(ConfigDiagnostic(
                kind="unread_key", key=key, file=self.cfg.path, line=self.cfg.line(key) or 1,
                message=f"'{key}: {shown_placeholder(value)}' is a template placeholder: {stand_in}", suggestion=None))
            return True
        problem = value_problem(name, value)
        if problem:  # a finding on its line; estimates go on without the unusable value
            self.diagnostics.append(ConfigDiagnostic(
                kind="invalid_value", key=key, file=self.cfg.path, line=self.cfg.line(key) or 1,
                message=f"'{key}' {problem}", suggestion=None))
            return True
        if transform is not None:
            value = transform(value)
            if value is _MISSING:
                return False
        self.settings[name] = Setting(value=value, key=key, file=self.cfg.path,
                                      line=self.cfg.line(key), source="config")
        return True

    def first(self, name: str, keys: Iterable[str], transform: Callable[[Any], Any] | None = None) -> bool:
        """Set *name* from the first of *keys* that is present."""
        return any(self.stated(name, key, transform) for key in keys)

    def derived(self, name: str, value: Any, key: str, *, overwrite: bool = False) -> None:
        """Set *name* to a value computed from config *key* (e.g. padding from ``sample_packing``)."""
        if self._taken(name) and not overwrite:
            return
        self.settings[name] = Setting(value=value, key=key, file=self.cfg.path,
                                      line=self.cfg.line(key), source="config")

    def _taken(self, name: str) -> bool:
        """A setting the config already stated (a default can still be replaced by a stated value)."""
        s = self.settings.get(name)
        return s is not None and s.source == "config"

    def default(self, name: str, value: Any, why: str) -> None:
        """Set *name* to the framework's default when the config did not set it."""
        if name not in self.settings:
            self.settings[name] = Setting(value=value, key=None, file=None, line=None,
                                          source=f"default: {why}")

    def external(self, name: str, value: Any, other: LoadedConfig, key: str) -> None:
        """Set *name* from a linked file (a DeepSpeed JSON), pointing at that file's line."""
        if not self._taken(name):
            self.settings[name] = Setting(value=value, key=key, file=other.path,
                                          line=other.line(key), source="config")

    def value(self, name: str, default: Any = None) -> Any:
        s = self.settings.get(name)
        return default if s is None else s.value

    def result(self) -> DialectResult:
        return DialectResult(settings=self.settings, diagnostics=self.diagnostics)


# ---------------------------------------------------------------- key checks

def premature_key(cfg: LoadedConfig, key: str, owner: str, detail: str, consequence: str, since: str,
                  suggestion: str | None = None) -> ConfigDiagnostic:
    """SP430's finding: *key* is a field of *owner* only from a release (*since*) later than every one the pins
    allow (*detail* says so); *consequence*: what the reader of the file does with a key it lacks."""
    return ConfigDiagnostic(
        kind="premature_key", key=key, file=cfg.path, line=cfg.line(key) or 1,
        message=f"'{key}' is not a field of {owner} at the pinned release: {detail}; {consequence}",
        suggestion=suggestion, suggestion_from=since)


def check_keys(cfg: LoadedConfig, space: Keyspace, *, section: str = "",
               dialect_label: str = "", scripts_read_extra: bool = False,
               removal: Callable[[str], Any] | None = None, arrival: Callable[[str], Any] | None = None,
               assumption: str | None = None, refuses_removed: bool = False) -> list[ConfigDiagnostic]:
    """Unknown, renamed, deprecated and removed keys at one level (*section* is a dotted prefix or '').

    `refuses_removed`: the parser refuses a key no class declares whatever its value (TrlParser's "Unknown
    arguments from config file", HfArgumentParser.parse_dict), so an empty removed key (`torch_dtype: null` under a
    trl whose ModelConfig has only dtype) still stops the run; elsewhere an empty old key does nothing.

    `scripts_read_extra`: the config feeds a parser the user's own script may extend (TRL recipes with their
    own ScriptArguments, HF scripts with ModelArguments/DataArguments), so a key that is no near miss of a
    known one is not certainly wrong: it is an `unread_key` (SP407, info), not an `unknown_key` (SP401).

    `removal(key)`: a renamed/deprecated key the newest release lacks, judged against the pinned versions
    (seqprof.config.key_history.Removal): 'error' (every pinned release lacks it) makes it a `removed_key`
    (SP408), 'warning' names the release that breaks it, 'assumed' (no pin) says which release was assumed.
    `arrival(replacement, since)`: a key deprecated for a *replacement* no pinned release has yet (or none reading
    the old value, from *since*): 'later', an `upcoming_deprecation` (SP429, info). When a later release also
    removes the old key, it stays the warning `removal` makes it, and its fix waits for the release that brings the
    replacement (`suggestion_from`): renaming at the pin would break the run."""
    mapping = cfg.get(section) if section else cfg.data
    if not isinstance(mapping, Mapping):
        return []
    out: list[ConfigDiagnostic] = []
    names = space.typo_targets if space.typo_targets is not None else space.known  # what works today, never a
    # renamed or deprecated key
    where = f" in '{section}'" if section else ""
    label = dialect_label or "this framework"
    for key in mapping:
        dotted = f"{section}.{key}" if section else str(key)
        line = cfg.line(dotted) or 1
        if mapping[key] is None and (key in space.renamed or key in space.deprecated) and not (
                refuses_removed and removal is not None
                and getattr(removal(str(key)), "verdict", None) in ("error", "assumed")):
            continue  # an empty old key does nothing, so there is nothing to migrate
        moved = space.renamed.get(key) or space.deprecated.get(key)
        if moved is not None:
            renamed = key in space.renamed
            gone = removal(str(key)) if removal is not None else None
            later = arrival(moved.replacement, moved.replacement_from) \
                if arrival is not None and moved.replacement and (gone is None or gone.verdict == "warning") else None
            since = None
            if later is not None and gone is None:  # deprecated past the pins: the old key is right until then
                gone = later
            elif later is not None:  # it breaks on an upgrade, and the fix needs a release the pins do not allow
                since = later.removed_in
                gone = replace(gone, detail=f"{gone.detail}; {later.fact or later.detail}: rename it on that "
                                            "upgrade, not before")
            if gone is not None and gone.verdict == "warning":  # every pinned release still takes it: say so first,
                # not "was renamed" / "is deprecated", which the pinned release may not have done yet (4.40.2 has no
                # eval_strategy, and never deprecated overwrite_output_dir)
                new_name = f"; its new name is '{moved.replacement}'" if moved.replacement else ""
                message = f"'{key}' is dropped by a release after the pinned one: {moved.why}{new_name}"
            elif renamed:
                message = f"'{key}' was renamed to '{moved.replacement}': {moved.why}"
            else:
                instead = f"; use '{moved.replacement}'" if moved.replacement else ""
                message = f"'{key}' is deprecated: {moved.why}{instead}"
            if moved.value_change:
                message += f"; {moved.value_change}"
            if gone is not None and (gone.verdict != "assumed" or gone.removed_in.split()[-1] not in moved.why):
                message += f"; {gone.detail}"
            if (gone is None or gone.verdict == "assumed") and assumption:
                message += f"; {assumption}"  # judged against the newest release, which may not be the one run
                if gone is not None:  # the newest release, which a fresh install gets, lacks it: a warning, since
                    message += ", which lack it"  # no pin says which release the run really has
                if moved.replacement and moved.replacement_from:  # the rename is no fix on an older install
                    message += (f"; '{moved.replacement}' reads this value only from {moved.replacement_from} on: "
                                f"on an older release keep '{key}'")
            kind = "removed_key" if gone is not None and gone.verdict == "error" else \
                "unread_key" if gone is not None and gone.verdict == "unknown" else \
                "upcoming_deprecation" if gone is not None and gone.verdict == "later" else \
                "renamed_key" if renamed else "deprecated_key"
            if (kind == "removed_key" or gone is not None and gone.verdict == "assumed") and not renamed:
                message = message.replace(f"'{key}' is deprecated: ", f"'{key}' is removed: ", 1)
            out.append(ConfigDiagnostic(kind=kind, key=dotted, file=cfg.path, line=line, message=message,
                                        suggestion=moved.replacement, value_change=moved.value_change,
                                        suggestion_from=since))
        elif key not in space.known:
            guess = did_you_mean(str(key), names)
            hint = f"; did you mean '{guess}'?" if guess else ""
            out.append(ConfigDiagnostic(
                kind="unread_key" if scripts_read_extra and not guess else "unknown_key", key=dotted,
                file=cfg.path, line=line,
                message=(f"'{key}' is not a field of {label}'s own argument classes{where}"
                         if scripts_read_extra and not guess else f"'{key}' is not a key {label} reads{where}{hint}"),
                suggestion=guess))
    return out


def nearest(value: str, choices: list[str], reach: int = 2) -> list[str]:
    """The choices at the smallest edit distance from *value*, if it is *reach* or less (a typo: `qwen2_5`,
    `alpacca`)."""
    near = sorted((levenshtein(value.lower(), c, reach), c) for c in choices)
    return [c for d, c in near if d <= reach and d == near[0][0]] if near else []


def levenshtein(a: str, b: str, limit: int) -> int:
    """Edit distance (insert/delete/substitute/transpose), or limit+1 once it exceeds *limit*."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    prev_best = 0
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        # a transposition reaches two rows back, so stop only when two rows are over the limit
        if best > limit and prev_best > limit:
            return limit + 1
        prev2, prev, prev_best = prev, cur, best
    return prev[-1] if prev[-1] <= limit else limit + 1


def did_you_mean(key: str, known: Collection[str]) -> str | None:
    """The closest known key, if it is close enough to be a typo of *key*; where it is, a known key made of the same
    words in another order is the better answer (axolotl's `test_datasets` for `datasets_test`, which the prefix
    rule answers with `datasets`, a key the file already sets). Word order alone never makes a guess: a recipe's
    own `val_dataset` is not torchtune's `dataset_val` misspelt (fengyuli-dev/cs229-project's recipe reads it)."""
    guess = _closest_key(key, known)
    return guess and (_same_words(key.lower().replace("-", "_"), known) or guess)


def _closest_key(key: str, known: Collection[str]) -> str | None:
    norm = key.lower().replace("-", "_")
    if norm != key and norm in known:
        return norm
    if len(norm) < 5:  # lora / mora / dora, bf16 / fp16: short names one edit apart are other settings, not typos
        return None
    limit = max(1, min(3, len(norm) // 4))
    dashed = "-" in key
    best, best_rank = None, (limit + 1, 0)
    for cand in _KeyIndex.of(frozenset(known)).candidates(norm, limit):
        d = levenshtein(norm, cand.lower().replace("-", "_"), limit)
        rank = (d, int(("-" in cand) != dashed))  # on a tie, answer in the key's own spelling style
        if d <= limit and rank < best_rank:
            best, best_rank = cand, rank
    if best is not None:
        return None if _another_word(norm, best.lower().replace("-", "_"), known) else best
    # a word dropped or added (``lora_rank`` vs ``lora_r``) is a prefix match, not a small edit
    prefixed = _KeyIndex.of(frozenset(known)).prefix_matches(norm) if len(norm) >= 6 else []
    return min(prefixed, key=lambda c: (abs(len(c) - len(norm)), c)) if prefixed else None


def _same_words(key: str, known: Collection[str]) -> str | None:
    """The one known key made of *key*'s words in another order."""
    words = sorted(key.split("_"))
    if len(words) < 2:
        return None
    found = [k for k in known if k.count("_") + k.count("-") == len(words) - 1 and k.lower() != key
             and sorted(k.lower().replace("-", "_").split("_")) == words]
    return found[0] if len(found) == 1 else None


def _another_word(key: str, guess: str, known: Collection[str]) -> bool:
    """*key* differs from *guess* by one whole word that the known keys use elsewhere: `dataset_path` is not a typo of
    `dataset_name`, nor `use_lora` of `use_dora`, as `learning_rat` is of `learning_rate`. A plural is a typo."""
    a, b = key.split("_"), guess.split("_")
    if len(a) != len(b) or len(a) < 2:
        return False
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    if len(diff) != 1:
        return False
    x, y = diff[0]
    if x.rstrip("s") == y.rstrip("s"):
        return False
    if min(len(x), len(y)) < 3:  # a short word replaced whole (`if_train` for `do_train`, TunePPO's `kl_scheduler`
        # for `lr_scheduler`) is another word; `rl_` for `lr_` is a slip of the fingers
        return not set(x) & set(y) or len(x) == len(y) and sorted(x) != sorted(y) and all(
            a != b for a, b in zip(x, y))
    words = _KeyIndex.of(frozenset(known)).words
    return y in words and (x in words or x in _framework_words())


@cache
def _framework_words() -> frozenset[str]:
    """Words of every field any framework's classes ever had (keys/key_history.json): `lora` of LLaMA-Factory's
    lora_rank is a word, so `lora_rank` read as transformers' is another key, not a typo of `local_rank`."""
    from seqprof.config.key_history import KeyHistory

    data = KeyHistory.load().data
    fields = {f for package in data.values() if isinstance(package, Mapping)
              for cls in (package.get("classes") or {}).values() if isinstance(cls, Mapping)
              for f in cls.get("fields") or ()}
    return frozenset(w for f in fields for w in f.lower().split("_") if len(w) >= 3)


class _KeyIndex:
    """Known keys indexed by length and by bigram, so a typo search over 10k unknown keys stays fast.

    The bigram count is a filter that never drops a key within the edit limit: one edit (insert, delete,
    substitute, transpose) changes at most 3 of the bigrams of a string, so a key within distance d of an
    n-character one shares at least (n - 1) - 3d of its bigram positions."""

    def __init__(self, known: frozenset[str]) -> None:
        self.keys = sorted(known)
        self.key_set = known
        self.norms = [k.lower().replace("-", "_") for k in self.keys]
        self.words = frozenset(w for norm in self.norms for w in norm.split("_") if len(w) >= 3)
        self.postings: dict[str, list[int]] = {}
        for i, norm in enumerate(self.norms):
            for gram in {norm[j:j + 2] for j in range(len(norm) - 1)}:
                self.postings.setdefault(gram, []).append(i)

    @staticmethod
    @cache
    def of(known: frozenset[str]) -> _KeyIndex:
        return _KeyIndex(known)

    def prefix_matches(self, norm: str) -> list[str]:
        """Known keys of 6+ characters that start with `norm` or that `norm` starts with, at most 5 apart."""
        out = []
        lo = bisect.bisect_left(self.keys, norm)
        while lo < len(self.keys) and self.keys[lo].startswith(norm):
            out.append(self.keys[lo])
            lo += 1
        out += [norm[:n] for n in range(6, len(norm)) if norm[:n] in self.key_set]
        return [k for k in out if abs(len(k) - len(norm)) <= 5 and len(k) >= 6]

    def candidates(self, norm: str, limit: int) -> list[str]:
        """Known keys, in sorted order, that may lie within `limit` edits of `norm`."""
        need = (len(norm) - 1) - 3 * limit
        if need <= 0:
            indices = range(len(self.keys))
        else:
            shared = [0] * len(self.keys)
            for j in range(len(norm) - 1):
                for i in self.postings.get(norm[j:j + 2], ()):
                    shared[i] += 1
            indices = [i for i, n in enumerate(shared) if n >= need]
        return [self.keys[i] for i in indices if abs(len(self.norms[i]) - len(norm)) <= limit]


# ---------------------------------------------------------------- value helpers

def as_bool(value: Any) -> Any:
    """Booleans as frameworks parse them from strings ('true', 'false'); other values unchanged."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def as_number(value: Any) -> Any:
    """Numbers stated as strings ('2e-5', '8') become numbers; 'auto' and the like stay missing."""
    if isinstance(value, bool):
        return _MISSING
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return _MISSING
        return int(f) if f.is_integer() and "." not in value and "e" not in value.lower() else f
    return _MISSING


def positive_or_missing(value: Any) -> Any:
    """A step count where <= 0 means 'unset' (HF's max_steps=-1)."""
    v = as_number(value)
    return v if v is not _MISSING and v > 0 else _MISSING


MISSING = _MISSING


def split_list(value: Any) -> list[Any]:
    """A comma-separated string or a list, as a list."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return list(value)
    return [value]


@cache
def load_keys_file(name: str) -> Mapping[str, Any]:
    """A committed key list (seqprof/config/dialects/keys/<name>.json), read once."""
    with open(KEYS_DIR / f"{name}.json", encoding="utf-8") as fh:
        return json.load(fh)


# ---------------------------------------------------------------- linked files

_ZERO_FROM_NAME = re.compile(r"(?:zero|z)_?([0-3])(?![0-9])", re.IGNORECASE)


INLINE_DEEPSPEED_UNKNOWN = ("The mapping is DeepSpeed's own config, which reads its keys one by one and passes over one it "
                            "does not know (ZeRO's stage and offload settings go under zero_optimization), so this "
                            "value is not used")


def link_deepspeed(b: Builder, key: str) -> LoadedConfig | None:
    """Canonical deepspeed/zero_stage (and DeepSpeed's own batch/precision) from a config key; the DeepSpeed
    config read, when there is one to read.

    The key holds a path to a DeepSpeed JSON (resolved next to the config, then upwards) or an
    inline mapping. When the file is not there (paths are often relative to the framework's
    repository), the ZeRO stage is read from the file name if it names one.
    """
    if not b.present(key):
        return None
    value = b.raw(key)
    b.stated("deepspeed", key)
    if isinstance(value, Mapping):
        from seqprof.config.dialects import deepspeed

        stage = _dig(value, "zero_optimization", "stage")
        if isinstance(stage, int):
            b.derived("zero_stage", stage, f"{key}.zero_optimization.stage")
        # an inline DeepSpeed config is DeepSpeed's to read, key by key, as a file of its own would be
        b.diagnostics.extend(replace(d, reason=INLINE_DEEPSPEED_UNKNOWN) if d.kind == "unknown_key" else d
                             for d in check_keys(b.cfg, Keyspace(known=deepspeed.KNOWN), section=key,
                                                 dialect_label=deepspeed.LABEL))
        return b.cfg.section(key)
    if not isinstance(value, str) or not value.strip():
        return None
    path = resolve_linked_file(value, b.cfg.path)
    if path is None:
        m = _ZERO_FROM_NAME.search(Path(value).name)
        if m:
            b.default("zero_stage", int(m.group(1)),
                      f"read from the DeepSpeed file name '{Path(value).name}' "
                      "(the file is not next to the config or above it)")
        return None
    ds = load_config(path)
    b.diagnostics.extend(ds.diagnostics)
    apply_deepspeed_json(b, ds)
    return ds if isinstance(ds.data, Mapping) else None


def apply_deepspeed_json(b: Builder, ds: LoadedConfig) -> None:
    """Settings a DeepSpeed JSON pins (values 'auto' defer to the trainer and are skipped)."""
    stage = ds.get("zero_optimization.stage")
    if isinstance(stage, int) and not isinstance(stage, bool):
        b.external("zero_stage", stage, ds, "zero_optimization.stage")
    for name, k in (("micro_batch_size", "train_micro_batch_size_per_gpu"),
                    ("gradient_accumulation_steps", "gradient_accumulation_steps"),
                    ("global_batch_size", "train_batch_size")):
        v = ds.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            b.external(name, v, ds, k)
    for prec in ("bf16", "fp16"):
        if ds.get(f"{prec}.enabled") is True:
            b.external("precision", prec, ds, f"{prec}.enabled")
    offload = [k for k in ("zero_optimization.offload_optimizer.device",
                           "zero_optimization.offload_param.device")
               if ds.get(k) not in (None, "none")]
    for k in offload:
        name = "offload_optimizer" if "optimizer" in k else "offload_params"
        b.external(name, ds.get(k), ds, k)


def link_json(b: Builder, name: str, key: str) -> None:
    """Canonical *name* (e.g. model_config) from a JSON file that config *key* names, if it exists."""
    value = b.raw(key)
    if not isinstance(value, str) or not value.strip():
        return
    path = resolve_linked_file(value, b.cfg.path)
    if path is None or path.suffix.lower() != ".json":
        return
    other = load_config(path)
    b.diagnostics.extend(other.diagnostics)
    b.settings.setdefault(name, Setting(value=dict(other.data), key=key, file=b.cfg.path,
                                        line=b.cfg.line(key), source="config"))


def _dig(mapping: Mapping[str, Any], *keys: str) -> Any:
    node: Any = mapping
    for k in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(k)
    return node


def precision_from_flags(b: Builder, bf16_keys: Iterable[str], fp16_keys: Iterable[str]) -> None:
    """precision = bf16/fp16 from the first true flag among the keys."""
    for key in bf16_keys:
        if as_bool(b.raw(key)) in (True, "auto", "full"):
            b.derived("precision", "bf16", key)
            return
    for key in fp16_keys:
        if as_bool(b.raw(key)) is True:
            b.derived("precision", "fp16", key)
            return
    for key in bf16_keys:
        if as_bool(b.raw(key)) is False:
            b.derived("precision", "fp32", key)
            return
