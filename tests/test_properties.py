"""Property tests (hypothesis): whatever bytes, JSON shapes, messages, YAML, profiles or settings a user has,
seqprof either works or raises its own one-line SeqprofError, never another exception (issue 11)."""

from __future__ import annotations

import json
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqprof.dataset.analyze import AnalyzeOptions, profile_source
from seqprof.dataset.profile import Profile
from seqprof.dataset.reader import resolve_source
from seqprof.dataset.tokenizers import load_tokenizer
from seqprof.errors import SeqprofError

def _one_line(exc: SeqprofError) -> None:
    """The error as the CLI prints it (user text escaped) is one non-empty line."""
    from seqprof.cli import _printable

    shown = _printable(str(exc))
    assert shown and "\n" not in shown and exc.message


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_leaf = st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True) | st.text(max_size=40)
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)
role = st.sampled_from(["system", "user", "assistant", "tool", "", "[/x]", "USER"]) | json_leaf
message = st.fixed_dictionaries({"role": role, "content": json_value | st.text(max_size=80)},
                                optional={"reasoning_content": st.text(max_size=20), "tool_calls": json_value})
row = (st.fixed_dictionaries({"messages": st.lists(message, max_size=6)})
       | st.fixed_dictionaries({"text": json_value})
       | st.fixed_dictionaries({"prompt": json_value, "completion": json_value})
       | st.fixed_dictionaries({"prompt": st.text(max_size=30) | st.lists(message, max_size=2),
                                "chosen": json_value | st.lists(message, max_size=2),
                                "rejected": json_value | st.lists(message, max_size=2)})
       | st.fixed_dictionaries({"instruction": json_value, "input": json_value, "output": json_value})
       | json_value)


class _Tokenizer:
    """The loaded tokenizer, with a short repr for hypothesis' failure reports."""

    def __init__(self, name: str) -> None:
        self.name, self.loaded = name, load_tokenizer(name)
        assert self.loaded.tokenizer.encode("hello").ids

    def __repr__(self) -> str:
        return self.name


@pytest.fixture(scope="module")
def tokenizer():
    return _Tokenizer("qwen-2.5")


def _profile(path, tok, skip=False):
    source = resolve_source(str(path))
    profile, _skips = profile_source(source, tok.loaded, AnalyzeOptions(skip_bad_rows=skip, cache=False), None, None)
    return profile


@SETTINGS
@given(body=st.binary(max_size=400), suffix=st.sampled_from([".jsonl", ".json", ".csv", ".parquet", ".jsonl.gz",
                                                              ".arrow"]))
def test_random_bytes_in_any_format_are_read_or_refused(tmp_path_factory, tokenizer, body, suffix):
    path = tmp_path_factory.mktemp("bytes") / ("data" + suffix)
    path.write_bytes(body)
    try:
        _profile(path, tokenizer)
    except SeqprofError as exc:
        _one_line(exc)


@SETTINGS
@given(rows=st.lists(row, min_size=1, max_size=5), skip=st.booleans())
def test_random_json_rows_and_messages_are_profiled_or_refused(tmp_path_factory, tokenizer, rows, skip):
    path = tmp_path_factory.mktemp("rows") / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        profile = _profile(path, tokenizer, skip)
    except SeqprofError as exc:
        _one_line(exc)
    else:
        assert profile.sequence.count >= 1


yaml_key = st.sampled_from(["base_model", "sequence_len", "micro_batch_size", "adapter", "lora_r", "learning_rate",
                            "num_epochs", "datasets", "rl", "model_name_or_path", "max_length", "bf16",
                            "per_device_train_batch_size", "deepspeed", "save_strategy", "max_steps",
                            "gradient_accumulation_steps", "lora_dropout", "model", "tokenizer", "batch_size"]) \
    | st.text(string.ascii_letters + "_-.", min_size=1, max_size=15)
yaml_doc = st.dictionaries(yaml_key, json_value, max_size=8)
yaml_text = st.text(alphabet=string.printable + "&*!|>{}[]:", max_size=200)


@SETTINGS
@given(doc=yaml_doc, noise=yaml_text, as_text=st.booleans())
def test_random_configs_are_read_or_refused(tmp_path_factory, doc, noise, as_text):
    from seqprof.config.read import read_plan
    from seqprof.lint.facts import build_facts
    from seqprof.lint.rules import load_rules
    from seqprof.lint.run import lint_plan
    from seqprof.settings import LintSettings

    path = tmp_path_factory.mktemp("cfg") / "train.yaml"
    path.write_text(noise if as_text else yaml.safe_dump(doc, allow_unicode=True))
    try:
        plan = read_plan(path)
        lint_plan(plan, build_facts(plan), load_rules(), LintSettings(), text=path.read_text())
    except SeqprofError as exc:
        _one_line(exc)


@pytest.fixture(scope="module")
def real_profile(tokenizer, tmp_path_factory):
    path = tmp_path_factory.mktemp("p") / "data.jsonl"
    path.write_text("".join(json.dumps({"messages": [{"role": "user", "content": "hi " * i},
                                                     {"role": "assistant", "content": "ok " * i}]}) + "\n"
                            for i in range(1, 30)))
    return _profile(path, tokenizer).to_dict()


def _damage(data, path, value):
    """Replace the value at `path` (a list of keys / indices, cut where the data ends) with `value`."""
    node = data
    for step in path[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
        else:
            return data
    if isinstance(node, dict) and node:
        node[sorted(node)[path[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node)] = value
    return data


@SETTINGS
@given(where=st.lists(st.integers(0, 50), min_size=1, max_size=4), value=json_value)
def test_damaged_profiles_are_read_or_refused(real_profile, where, value):
    from seqprof.batching.buckets import build_bucket_report

    data = _damage(json.loads(json.dumps(real_profile)), where, value)
    try:
        profile = Profile.from_dict(data)
        build_bucket_report(profile.sequence, 4, batch_size=4)
    except SeqprofError as exc:
        _one_line(exc)


settings_doc = st.dictionaries(st.sampled_from(["select", "ignore", "severity", "gpu", "gpu_memory", "tokenizer",
                                                "fail_on", "rule_dirs", "exclude"]) | st.text(max_size=8),
                               json_value, max_size=5)


@SETTINGS
@given(doc=settings_doc, noise=yaml_text, as_text=st.booleans(), toml=st.booleans())
def test_random_settings_files_are_read_or_refused(tmp_path_factory, doc, noise, as_text, toml):
    from seqprof.settings import find_settings

    folder = tmp_path_factory.mktemp("settings")
    if toml:
        body = noise if as_text else "[tool.seqprof]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n"
                                                                 for k, v in doc.items())
        (folder / "pyproject.toml").write_text(body)
    else:
        (folder / ".seqprof.yaml").write_text(noise if as_text else yaml.safe_dump(doc, allow_unicode=True))
    try:
        find_settings(folder)
    except SeqprofError as exc:
        _one_line(exc)
