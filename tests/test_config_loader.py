"""The safe config reader: lines, duplicates, tags, alias bombs, YAML 1.1 scalars, JSON, linked files.

Values are checked against PyYAML's ``safe_load`` (what axolotl, TRL and SpecForge load configs
with) and lines against a plain text scan, both independent of the reader; the two composers
(libyaml, ruamel.yaml) are checked against each other on real configs.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from seqprof.config.loader import (
    MAX_EXPANDED_NODES,
    default_backend,
    load_config,
    parse_config,
    resolve_linked_file,
)
from seqprof.errors import SeqprofError

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "tests" / "data" / "configs"  # the real configs these tests read, copied exactly (README there)
CORPUS = REPO.parent / "shared" / "configs"  # every shared config: corpus-wide tests skip without it
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/configs (the whole corpus) not beside the checkout")

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the same safe_load, in C where available
BACKENDS = ["ruamel"] + (["libyaml"] if default_backend() == "libyaml" else [])
backends = pytest.mark.parametrize("backend", BACKENDS)

_FLOAT_TEXT = re.compile(r"^[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)[eE][-+]?\d+$")


def pyyaml_view(value: Any) -> Any:
    """PyYAML's value, with the one documented difference applied: '1e-4' strings become floats."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, bool) else k: pyyaml_view(v) for k, v in value.items()}
    if isinstance(value, list):
        return [pyyaml_view(v) for v in value]
    if isinstance(value, str) and _FLOAT_TEXT.match(value):
        return float(value.replace("_", ""))
    if hasattr(value, "isoformat"):  # PyYAML builds dates; the reader keeps the text
        return value.isoformat()
    return value


def key_line(text: str, key: str, after: int = 0) -> int:
    """1-based line of the first ``key:`` at or after line *after* (a plain text scan)."""
    pattern = re.compile(rf"^\s*(?:-\s+)?[\"']?{re.escape(key)}[\"']?\s*:")
    for i, line in enumerate(text.splitlines(), 1):
        if i > after and pattern.match(line):
            return i
    raise AssertionError(f"{key} not in text")


SAMPLE = """\
model:
  name: base
  layers: 4
datasets:
  - path: a/b
    type: alpaca
  - path: c/d
lr: 2e-5
flag: yes
"""


@backends
def test_lines_of_nested_keys_and_list_items(backend: str) -> None:
    cfg = parse_config(SAMPLE, "s.yaml", backend=backend)
    assert cfg.data == pyyaml_view(yaml.safe_load(SAMPLE))
    for dotted, key, after in [("model", "model", 0), ("model.name", "name", 0), ("model.layers", "layers", 0),
                               ("datasets", "datasets", 0), ("datasets.0.path", "path", 0),
                               ("datasets.0.type", "type", 0), ("datasets.1.path", "path", 6), ("lr", "lr", 0)]:
        assert cfg.line(dotted) == key_line(SAMPLE, key, after), dotted
    assert cfg.get("datasets.1.path") == "c/d"
    assert cfg.has("model.layers") and not cfg.has("model.missing") and not cfg.has("datasets.7")


@backends
def test_duplicate_key_is_a_diagnostic_naming_both_lines_and_the_last_value_wins(backend: str) -> None:
    text = "a: 1\nb:\n  c: 2\n  c: 3\na: 4\n"
    cfg = parse_config(text, "d.yaml", backend=backend)
    assert cfg.data == yaml.safe_load(text)  # PyYAML also keeps the last value
    dups = {(d.key, d.line, d.other_line) for d in cfg.diagnostics if d.kind == "duplicate_key"}
    assert dups == {("b.c", 4, 3), ("a", 5, 1)}
    assert cfg.line("a") == 5 and cfg.line("b.c") == 4


@backends
def test_a_duplicate_with_the_same_value_is_its_own_kind(backend: str) -> None:
    """PyYAML's last-one-wins loses nothing when both values agree; OmegaConf still refuses it (SP404 decides)."""
    cfg = parse_config("a: 1\nb: {c: 2}\na: 1\nb: {c: 2}\nd: x\nd: y\n", "d.yaml", backend=backend)
    kinds = {(d.key, d.kind, d.line, d.other_line) for d in cfg.diagnostics}
    assert kinds == {("a", "repeated_key", 3, 1), ("b", "repeated_key", 4, 2), ("d", "duplicate_key", 6, 5)}


@backends
def test_a_duplicate_mapping_drops_the_lines_of_the_one_it_replaces(backend: str) -> None:
    cfg = parse_config("t:\n  x: 1\n  y: 2\nt:\n  x: 5\n", "d.yaml", backend=backend)
    assert cfg.data == {"t": {"x": 5}}
    assert cfg.line("t.x") == 5 and cfg.line("t.y") is None


@backends
def test_merge_keys_match_pyyaml_and_an_override_is_not_a_duplicate(backend: str) -> None:
    text = "base: &b\n  x: 1\n  y: 2\nother: &o\n  z: 9\nrun:\n  <<: [*b, *o]\n  y: 3\n"
    cfg = parse_config(text, "m.yaml", backend=backend)
    assert cfg.data == yaml.safe_load(text)
    assert not cfg.diagnostics
    assert cfg.line("run.y") == 8 and cfg.line("run.x") == 2


@backends
def test_tags_never_construct_objects(backend: str, tmp_path: Path) -> None:
    """A tag yaml.safe_load refuses (what the trainers load configs with) is an error at its line, never
    an object; the tags it builds are honoured."""
    marker = tmp_path / "pwned"
    for line, text in ((1, f"a: !!python/object/apply:os.system ['touch {marker}']\n"),
                       (2, "x: 1\nb: !Ref some.thing\n"), (1, "c: !!python/name:os.system\n")):
        with pytest.raises(SeqprofError) as err:
            parse_config(text, "t.yaml", backend=backend)
        assert err.value.line == line and "yaml.safe_load" in err.value.message
        with pytest.raises(yaml.constructor.ConstructorError):
            yaml.safe_load(text)  # the trainer's own loader refuses it too
    assert not marker.exists()
    cfg = parse_config("d: !!str 12\ne: !!int '7'\nf: !!float 2e-4\n", "t.yaml", backend=backend)
    assert cfg.data == {"d": "12", "e": 7, "f": 2e-4} == yaml.safe_load("d: !!str 12\ne: !!int '7'\nf: !!float 2e-4\n")


def billion_laughs(levels: int = 9, fan: int = 10) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


@backends
def test_billion_laughs_fails_fast(backend: str) -> None:
    text = billion_laughs()
    start = time.perf_counter()
    with pytest.raises(SeqprofError, match="alias") as err:
        parse_config(text, "lol.yaml", backend=backend)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, elapsed
    assert err.value.path == "lol.yaml" and err.value.line is not None


@backends
def test_aliases_below_the_bound_expand_like_pyyaml(backend: str) -> None:
    # 10**4 leaves: well under MAX_EXPANDED_NODES, so read like any other file
    text = billion_laughs(levels=3)
    assert 10 ** 4 * 2 < MAX_EXPANDED_NODES
    cfg = parse_config(text, "ok.yaml", backend=backend)
    assert cfg.data == yaml.safe_load(text)
    assert len(cfg.data["l3"]) == 10 and len(cfg.data["l3"][0][0]) == 10


@backends
def test_recursive_alias_is_an_error(backend: str) -> None:
    with pytest.raises(SeqprofError, match="recursive"):
        parse_config("a: &x\n  b: *x\n", "r.yaml", backend=backend)


@backends
@pytest.mark.parametrize("text, what", [("- a\n- b\n", "list"), ("42\n", "scalar"), ("", "empty"),
                                        ("# only a comment\n", "empty")])
def test_non_mapping_top_level_is_an_error(backend: str, text: str, what: str) -> None:
    with pytest.raises(SeqprofError) as err:
        parse_config(text, "x.yaml", backend=backend)
    assert what in str(err.value)
    assert "mapping" in (err.value.fix or "")


@backends
def test_syntax_error_names_the_line(backend: str) -> None:
    text = "a: 1\nb: [1, 2\nc: 3\n"
    with pytest.raises(SeqprofError) as err:
        parse_config(text, "bad.yaml", backend=backend)
    with pytest.raises(yaml.YAMLError) as ref:
        yaml.safe_load(text)
    assert err.value.line == ref.value.problem_mark.line + 1


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    # the default composer; ruamel's pure-Python fallback takes seconds to fail the same way
    with pytest.raises(SeqprofError, match="nest"):
        parse_config("a: " + "[" * 1500 + "]" * 1500 + "\n", "deep.yaml")


@backends
def test_yaml_1_1_scalars_as_pyyaml_reads_them(backend: str) -> None:
    text = ("t: yes\nf: off\nn: ~\noct: 017\nhexa: 0x1F\nsexa: 1:30\nfl: 1.5e-4\nexp: 2e-5\nqexp: '2e-5'\n"
            "inf: .inf\nint_: 1_000\nneg: -3\nwhen: 2024-01-31\nword: on_time\n")
    cfg = parse_config(text, "s.yaml", backend=backend)
    expected = pyyaml_view(yaml.safe_load(text))
    expected["qexp"] = "2e-5"  # quoted, it stays a string (PyYAML keeps both as strings)
    assert cfg.data == expected
    assert cfg.data["exp"] == 2e-5
    assert cfg.data["t"] is True and cfg.data["oct"] == 15 and cfg.data["sexa"] == 90
    assert math.isinf(cfg.data["inf"])


def test_keys_keep_their_spelling() -> None:
    cfg = parse_config("on: 1\n'yes': 2\n3: c\nnull: d\n", "k.yaml")
    assert set(cfg.data) == {"on", "yes", "3", "null"}


def test_json_lines_duplicates_and_tab_fallback(tmp_path: Path) -> None:
    doc = {"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3, "overlap_comm": False}}
    path = tmp_path / "ds.json"
    text = json.dumps(doc, indent=2)
    path.write_text(text)
    cfg = load_config(path)
    assert cfg.format == "json" and cfg.data == doc
    assert cfg.line("zero_optimization.stage") == key_line(text, '"stage"'.strip('"'))
    dup = tmp_path / "dup.json"
    dup.write_text('{\n  "a": 1,\n  "a": 2\n}\n')
    d = load_config(dup)
    assert d.data == {"a": 2}
    assert [(x.kind, x.line, x.other_line) for x in d.diagnostics] == [("duplicate_key", 3, 2)]
    tabs = tmp_path / "tabs.json"
    tabs.write_text('{\n\t"a": {\n\t\t"b": 1\n\t}\n}\n')
    assert load_config(tabs).data == {"a": {"b": 1}}
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "a": 1,\n  "b": \n}\n')  # valid YAML (b: null), invalid JSON
    with pytest.raises(SeqprofError) as err:
        load_config(broken)
    with pytest.raises(json.JSONDecodeError) as ref:
        json.loads(broken.read_text())
    assert err.value.line == ref.value.lineno and err.value.path == str(broken)


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(SeqprofError, match="not found"):
        load_config(tmp_path / "missing.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(SeqprofError, match="UTF-8"):
        load_config(latin)


def test_resolve_linked_file_next_to_the_config_then_upwards(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "examples" / "deepspeed").mkdir(parents=True)
    (repo / "examples" / "train").mkdir(parents=True)
    ds = repo / "examples" / "deepspeed" / "ds_z3.json"
    ds.write_text("{}")
    config = repo / "examples" / "train" / "run.yaml"
    config.write_text("deepspeed: examples/deepspeed/ds_z3.json\n")
    assert resolve_linked_file("examples/deepspeed/ds_z3.json", config) == ds.resolve()
    local = repo / "examples" / "train" / "local.json"
    local.write_text("{}")
    assert resolve_linked_file("local.json", config) == local.resolve()
    assert resolve_linked_file("examples/deepspeed/zero9.json", config) is None
    assert resolve_linked_file(str(ds), config) == ds


def _real_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


@needs_corpus
def test_every_real_config_reads_as_pyyaml_does() -> None:
    files = _real_files()
    assert len(files) > 400
    for path in files:
        cfg = load_config(path)
        text = path.read_text()
        assert cfg.data == pyyaml_view(yaml.load(text, Loader=LOADER)), path
        # every top-level key's line is where the text puts it
        for key in cfg.data:
            assert cfg.line(key) == key_line(text, key), (path, key)


@needs_corpus
@pytest.mark.skipif(len(BACKENDS) < 2, reason="PyYAML without libyaml: one backend only")
def test_both_composers_agree_on_real_configs() -> None:
    files = _real_files()[::15]  # ruamel's pure-Python composer is slow; a spread sample
    for path in files:
        text = path.read_text()
        a = parse_config(text, str(path), is_json=path.suffix == ".json", backend="libyaml")
        b = parse_config(text, str(path), is_json=path.suffix == ".json", backend="ruamel")
        assert a.data == b.data and a.key_lines == b.key_lines and a.diagnostics == b.diagnostics, path


@backends
def test_a_key_repeated_only_to_name_anchors_loses_nothing(backend: str) -> None:
    """ZimpleX/SMoRE-LLM writes `define: &model_zoo_name ...` six times to declare anchors that later keys alias (its
    ModelArguments has a dummy `define` field for them); the values live on in the aliases, and deleting the
    repeats, as a duplicate-key fix would, breaks the file ("found undefined alias")."""
    text = "define: &name llama3\ndefine: &arch moe\nmodel: *name\narch: *arch\nlr: 1\nlr: 2\n"
    cfg = parse_config(text, "d.yaml", backend=backend)
    assert cfg.data == yaml.safe_load(text)
    assert {(d.key, d.kind) for d in cfg.diagnostics} == {("lr", "duplicate_key")}


def test_a_str_format_template_that_yaml_cannot_parse_says_so(tmp_path: Path) -> None:
    """nearai's finetune templates hold `{DATASET_ARGS}` where their script (finetune/__init__.py) puts a block
    before `tune run`: the file is refused, but "fix the syntax" would break the template."""
    from seqprof.config.loader import load_config

    config = tmp_path / "template.yaml"
    config.write_text("dataset:\n  _component_: torchtune.datasets.instruct_dataset\n{DATASET_ARGS}\nlr: 3e-4\n")
    with pytest.raises(SeqprofError) as err:
        load_config(config)
    assert "{DATASET_ARGS}" in str(err.value.fix) and "renders" in str(err.value.fix)
    config.write_text("a: [1, 2\nb: ${X}\n")  # an interpolation is no str.format slot: a plain syntax error
    with pytest.raises(SeqprofError) as err:
        load_config(config)
    assert err.value.fix == "fix the syntax at that line"


def test_tags_the_project_s_own_loader_constructs_are_read(tmp_path: Path) -> None:
    """illuin-tech/colpali loads scripts/configs/qwen2/train_colqwen2_model.yaml with `configue.load(config_file,
    sub_path="config")` (scripts/train/train_colbert.py), and configue registers `!path`, `!ext`, `!cfg` and
    `!import:` (configue 6.0.2 file_loader.py:27-30): the file is read with those values as written. Without the
    script that imports configue, nothing in the project constructs `!path`, and the error stands; a tag the
    project registers itself (`yaml.add_constructor("!path", ...)`) is read too."""
    import shutil

    from corpus_layout import lay_out

    tree = lay_out(tmp_path / "colpali", only="illuin-tech__colpali")
    config = tree / "illuin-tech__colpali/scripts__configs__qwen2__train_colqwen2_model.yaml"
    script = tree / "illuin-tech__colpali/scripts__train__train_colbert.py"
    assert "configue" in script.read_text() and "!path" in config.read_text()
    cfg = load_config(config)
    assert cfg.data["config"]["output_dir"].endswith("models/colqwen2-cesmoothmax-5e-2604")
    other = tmp_path / "plain"
    (other / ".git").mkdir(parents=True)
    shutil.copy(config, other / "c.yaml")
    with pytest.raises(SeqprofError) as err:
        load_config(other / "c.yaml")
    assert err.value.line == 3 and "!path" in err.value.message
    own = tmp_path / "own"  # (a project's scan is cached by its root: another folder)
    (own / ".git").mkdir(parents=True)
    shutil.copy(config, own / "c.yaml")
    (own / "load.py").write_text("import yaml\nyaml.add_constructor('!path', lambda loader, node: node.value)\n"
                                 "yaml.add_constructor('!ext', lambda loader, node: node.value)\n"
                                 "yaml.add_multi_constructor('!imp', lambda loader, suffix, node: node.value)\n")
    assert load_config(own / "c.yaml").data["config"]["output_dir"].startswith("../")


def test_python_tags_a_project_s_full_loader_builds_are_read(tmp_path: Path) -> None:
    """ssbuild/chatglm_finetuning's config/main.py reads its train_pl.yaml with `yaml.full_load`, whose
    FullConstructor builds `optimizer_betas: !!python/tuple [0.9, 0.999]` (PyYAML constructor.py): the file loads.
    With the loader switched to safe_load the tag stands as an error, and FullLoader never builds a python/object."""
    from corpus_layout import lay_out

    folder = "ssbuild__chatglm_finetuning"
    tree = lay_out(tmp_path / "full", only=folder)
    config = tree / f"{folder}/scripts__config__train_pl.yaml"
    assert "!!python/tuple" in config.read_text()
    assert load_config(config).data["optimizer_betas"] == [0.9, 0.999]
    tree = lay_out(tmp_path / "safe", only=folder)
    main = tree.root / folder / "config" / "main.py"
    main.write_text(main.read_text().replace("yaml.full_load(", "yaml.safe_load("))
    with pytest.raises(SeqprofError) as err:
        load_config(tree / f"{folder}/scripts__config__train_pl.yaml")
    assert "python/tuple" in err.value.message
    own = tmp_path / "object"
    (own / ".git").mkdir(parents=True)
    (own / "main.py").write_text("cfg = yaml.full_load(open(path))\n")
    (own / "c.yaml").write_text("model: !!python/object:foo.Bar {}\n")
    with pytest.raises(SeqprofError):
        load_config(own / "c.yaml")


def test_a_json_config_under_another_name_is_read_as_json(tmp_path: Path) -> None:
    """hkust-nlp/dart-math's cfgs/deepspeed/zero-stage2.conf is a DeepSpeed JSON with a trailing comma, which
    json.load (accelerate's HfDeepSpeedConfig) refuses: read as JSON by its first character, not leniently as a YAML
    flow mapping. A .yaml file that starts with a flow mapping stays YAML."""
    from corpus_layout import lay_out

    folder = "hkust-nlp__dart-math"
    config = lay_out(tmp_path, only=folder) / f"{folder}/cfgs__deepspeed__zero-stage2.conf"
    with pytest.raises(SeqprofError) as err:
        load_config(config)
    assert err.value.line == 7 and "invalid JSON" in err.value.message
    flow = tmp_path / "flow.yaml"
    flow.write_text('{"a": 1, "b": 2,}\n')
    assert load_config(flow).data == {"a": 1, "b": 2}
